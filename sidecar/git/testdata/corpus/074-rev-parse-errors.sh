git init -q
git rev-parse HEAD; echo "exit $?"
echo a > a && git add a && git commit -q -m a
git rev-parse --verify nope; echo "exit $?"
git rev-parse master
git rev-parse --short=10 HEAD
