git init -q
echo content > old.txt && git add . && git commit -q -m init
git mv old.txt new.txt
git status
git status -s
git status --porcelain=v2
git diff --cached
git diff --cached --stat
git commit -m renamed
git log --oneline --stat
git show --name-status --format=%s
