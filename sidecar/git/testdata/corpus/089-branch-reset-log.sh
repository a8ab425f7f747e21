# branch -f and checkout -B log a reset of an existing branch, not a creation.
git init -q
echo a > f && git add f && git commit -q -m a
echo b > f && git commit -q -am b
git branch side HEAD~1
git branch -f side master
git branch -f side master
git checkout -q -B side HEAD~1
git checkout -q master
git checkout -q -B fresh
git rev-parse --abbrev-ref @{-1}
git log --oneline side
