git init -q
echo a > a && git add a && git commit -q -m a
echo n > n && git add n
git reset
git status -s
git add n
git reset -q HEAD n
git status -s
