git init -q
echo 1 > a && git add a && git commit -q -m 'add a'
echo 1 > b && git add b && git commit -q -m 'add b'
echo 2 > a && git commit -q -am 'change a'
mkdir d && echo 1 > d/c && git add d && git commit -q -m 'add d/c'
git log --oneline -- a
git log --oneline -- b
git log --oneline -- d
git log --oneline -n 2
git log --oneline -3
git log --oneline --max-count=1
git log --format=%s HEAD~2..HEAD
git log --oneline HEAD~1
