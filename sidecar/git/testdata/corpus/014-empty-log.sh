git init -q
git log; echo "exit $?"
git diff --cached
git status -s -b
