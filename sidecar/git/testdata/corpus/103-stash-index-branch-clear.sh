git init -q -b main
echo a > a && echo b > b && mkdir d && echo e > d/e && git add . && git commit -q -m one
git stash clear; echo "exit $?"
git stash clear x; echo "exit $?"
echo a2 >> a && git stash -q && echo b2 >> b && git stash -q
git stash list
git stash clear
git stash list; echo "exit $?"
git stash pop; echo "exit $?"
echo n > n && git add n && echo a2 >> a && git add a && echo a3 >> a && echo b2 >> b && git rm -q d/e
git stash
git stash apply --index
git status --short
git diff --cached --stat
git reset -q --hard
git stash pop --index -q; echo "exit $?"
git status --short
git stash list; echo "exit $?"
git stash -q
echo b3 >> b && git stash -q -m second
git stash branch; echo "exit $?"
git stash branch main; echo "exit $?"
git stash branch feat stash@{1}
git status --short
git branch
git stash list
git stash -q
git stash branch other
git stash list; echo "exit $?"
git reset -q --hard
git stash branch more; echo "exit $?"
git status --short
git stash list; echo "exit $?"
git stash branch none; echo "exit $?"
git log --oneline --all
