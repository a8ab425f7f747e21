# switch -, checkout - and @{-N} read HEAD's reflog.
git init -q
echo a > f && git add f && git commit -q -m a
git switch -c topic
echo b > f && git commit -q -am b
git switch -
cat f
git checkout -
cat f
git rev-parse @{-1}
git log --oneline -1 @{-1}
git branch -m topic renamed
git switch master
git switch -
git branch
git checkout @{-1}
git branch -d renamed
git checkout -
