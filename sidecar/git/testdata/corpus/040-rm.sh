git init -q
mkdir d
echo 1 > a && echo 2 > d/b && echo 3 > d/c && git add . && git commit -q -m init
git rm a
git rm d; echo "exit $?"
git rm -r d
git status
ls
git commit -q -m removed
git log --oneline --name-status
