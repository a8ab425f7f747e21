git init -q
: > empty
git add empty
git commit -m empty
git diff HEAD~0 --stat
echo content > empty
git diff
git commit -q -am filled
: > empty
git diff
git rm -q empty
git diff --cached
