git init -q
echo 1 > f && git add f && git commit -q -m one
git switch --detach HEAD
echo 2 > f
git commit -am 'on detached'
git log --oneline
git status -s -b
git rev-parse --abbrev-ref HEAD
