git init -q
echo 1 > f && git add f && git commit -q -m one
echo 2 > f && echo n > n && git add . && git commit -q -m two
echo dirty > f
echo u > untracked
git reset --hard HEAD~1
git status -s
ls
cat f
