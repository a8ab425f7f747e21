git init -q
echo target > t && echo f > f && git add . && git commit -q -m init
rm f && ln -s t f
git status -s
git status
git add f
git status -s
git commit -q -m 'file to symlink'
git show --stat --format=%s
