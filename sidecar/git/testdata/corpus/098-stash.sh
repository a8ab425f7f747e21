git init -q -b main
echo a > a && echo b > b && mkdir d && echo e > d/e && git add . && git commit -q -m one
git stash
git stash list
echo a2 >> a && echo n > n && git add n && echo b2 >> b && git add b && echo b3 >> b && rm d/e
echo u > untracked
git stash
git status --short
git stash list
echo m >> a
git stash push -q -m "my msg"
git stash list
git stash pop
git status --short
git stash list
echo x >> a
git stash pop; echo "exit $?"
git checkout -- a
git stash pop
git status --short
git stash list; echo "exit $?"
git stash pop; echo "exit $?"
cat a b n
git diff --cached --stat
