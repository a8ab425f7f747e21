git init -q src
cd src
echo a > a && mkdir d && echo b > d/b && git add . && git commit -q -m first
git tag v1
cd ..
git clone src dst
cd dst
git status
git status -sb
git status --porcelain=v2 -b
git log --oneline
git tag
git branch
cat a d/b
