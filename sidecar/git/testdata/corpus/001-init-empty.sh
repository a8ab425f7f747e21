git init
git status
git status -s
git status --porcelain=v2 -b
