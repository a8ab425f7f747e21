git init -q
echo v1 > f && git add f && git commit -q -m v1
echo v2 > f && git commit -q -am v2
git restore --source=HEAD~1 f
cat f
git status -s
git diff
