git init -q
echo a > f && git add f && git commit -q -m a
rm f
git status
git status -s
git add f
git status -s
echo a > f
git add f
git status
