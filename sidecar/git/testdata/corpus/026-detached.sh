git init -q
echo 1 > f && git add f && git commit -q -m one
echo 2 > f && git commit -q -am two
git checkout HEAD~1
git status
git branch
cat f
git checkout master
cat f
