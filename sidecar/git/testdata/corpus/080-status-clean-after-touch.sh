git init -q
echo same > f && git add f && git commit -q -m f
touch f
git status -s
git diff
echo same > f
git status
