git init -q
echo target > real
ln -s real link
git add .
git commit -m 'with symlink'
git ls-files -s
rm link && ln -s elsewhere link
git status -s
git diff
git commit -q -am retarget
git show --stat --format=%s
