git init -q
echo a > a && git add a && git commit -q -m a
git branch -m main
git branch
git status -s -b
git branch other
git branch -m other renamed
git branch
git branch -m renamed main; echo "exit $?"
