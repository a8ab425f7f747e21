git init -q
echo 1 > a && echo 1 > b && echo 1 > c && git add . && git commit -q -m init
echo 2 > a && git add a && echo 3 > a
git rm -q --cached b
rm c
echo n > n
git status
git status -s
git status --porcelain=v2
