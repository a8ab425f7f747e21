git init -q
echo a > a && git add a && git commit -q -m a
git branch merged
git checkout -b side
echo s > s && git add s && git commit -q -m side
git checkout master
git branch -d merged
git branch -d side; echo "exit $?"
git branch -D side
git branch -d nope; echo "exit $?"
git branch -d master; echo "exit $?"
git branch
