git init -q
echo 1 > f && git add f && git commit -q -m one
git tag v1
echo 2 > f && git commit -q -am two
git tag -a v2 -m 'release two'
git tag
git rev-parse v1
git log --oneline v1
git show --stat v1
git tag v1; echo "exit $?"
git tag -d v1
git tag -d v1; echo "exit $?"
git tag
