git init -q
git checkout -b main
git status
echo a > a && git add a && git commit -q -m first
git branch
git log --oneline
