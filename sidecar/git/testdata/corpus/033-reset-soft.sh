git init -q
echo 1 > f && git add f && git commit -q -m one
echo 2 > f && git commit -q -am two
git reset --soft HEAD~1
git status
git log --oneline
git diff --cached
