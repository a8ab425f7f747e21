# stderr: unstable (git diff outside a repository prints its whole usage)
git status; echo "status $?"
git log; echo "log $?"
git diff; echo "diff $?"
git add x; echo "add $?"
