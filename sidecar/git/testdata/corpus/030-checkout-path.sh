git init -q
echo base > f && echo b > g && git add . && git commit -q -m base
echo dirty > f
echo dirty > g
git checkout -- f
cat f g
git checkout g
cat g
git status
