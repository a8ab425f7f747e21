git init -q
echo 1 > f && echo x > x && git add . && git commit -q -m one
echo 2 > f && rm x && echo n > n && git add -A && git commit -q -m two
git reset HEAD~1
git status -s
git log --oneline
