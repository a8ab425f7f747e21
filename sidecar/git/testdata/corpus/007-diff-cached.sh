git init -q
echo a > a
git add a
git diff --cached
git commit -q -m a
echo b >> a
echo n > n
git add .
git diff --cached
git diff --staged --stat
git diff HEAD
git diff
