git init -q
echo 1 > a && echo 1 > b && git add . && git commit -q -m init
echo 2 > a && rm b && echo new > c
git add -u
git status -s
git add -A
git status -s
git add; echo "exit $?"
git add nope; echo "exit $?"
