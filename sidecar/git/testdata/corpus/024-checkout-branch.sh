git init -q
echo base > f && git add f && git commit -q -m base
git checkout -b feature
echo feature > f && echo extra > g && git add . && git commit -q -m feature
git checkout master
cat f
ls
git checkout feature
cat f g
git checkout feature
git log --oneline
