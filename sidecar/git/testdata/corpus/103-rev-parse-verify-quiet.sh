git init -q -b main
echo a > a && git add a && git commit -q -m one
git rev-parse --verify -q HEAD
git rev-parse --verify -q nope; echo "exit $?"
git rev-parse -q --verify refs/heads/nope; echo "exit $?"
git rev-parse --verify nope; echo "exit $?"
git rev-parse -q nope; echo "exit $?"
git rev-parse --quiet --verify HEAD^{tree}
git rev-parse --verify -q HEAD~5; echo "exit $?"
git rev-parse --verify -q HEAD^{blob}; echo "exit $?"
git rev-parse --verify -q a; echo "exit $?"
