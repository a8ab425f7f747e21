git init -q
echo 1 > a
echo 1 > b
git add .
git commit -q -m init
echo 2 > a
rm b
echo new > c
git status -s
git commit -a -m 'all tracked'
git status -s
git log --oneline --name-status
