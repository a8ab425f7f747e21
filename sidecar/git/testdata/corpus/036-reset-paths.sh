git init -q
echo 1 > f && echo 1 > g && git add . && git commit -q -m one
echo 2 > f && echo 2 > g && git add .
git reset f
git status -s
git reset -- g
git status -s
git reset --hard f; echo "exit $?"
