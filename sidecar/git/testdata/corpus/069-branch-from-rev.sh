git init -q
echo 1 > f && git add f && git commit -q -m one
echo 2 > f && git commit -q -am two
git branch old HEAD~1
git checkout old
cat f
git log --oneline
git checkout -b newer master
git log --oneline
git branch
