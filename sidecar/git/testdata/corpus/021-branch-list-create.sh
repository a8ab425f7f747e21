git init -q
echo a > a && git add a && git commit -q -m a
git branch feature
git branch topic HEAD
git branch
git branch feature; echo "exit $?"
git branch 'bad name'; echo "exit $?"
git branch --show-current
