git init -q -b main
echo a > a && echo b > b && mkdir d && echo e > d/e && git add . && git commit -q -m one
git switch -q -c side
echo x >> a && git commit -q -am 'side change'
echo c > c && git add c && git commit -q -m 'add c'
git rm -q d/e && git commit -q -m 'drop e'
git switch -q main
echo y >> b && git commit -q -am 'main change'
git cherry-pick side~1
git cherry-pick side~2
git cherry-pick side
git revert HEAD~1
git cherry-pick nope; echo "exit $?"
git revert nope; echo "exit $?"
echo q > c && git add c
git cherry-pick side~1; echo "exit $?"
git reset -q --hard
echo z >> b && git revert HEAD~3; echo "exit $?"
git status --short
git log --oneline
git log -1 --format=%B HEAD~1
git status
