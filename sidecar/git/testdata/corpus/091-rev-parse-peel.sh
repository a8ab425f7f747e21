git init -q
mkdir d && echo a > d/a && echo b > b && git add . && git commit -q -m one
echo c >> b && git commit -q -am two
git tag light
git tag -a -m 'annotated' v1 HEAD~1
git rev-parse HEAD^{tree}
git rev-parse HEAD~1^{tree} HEAD^{commit} HEAD^{}
git rev-parse light v1 v1^{} v1^{commit} v1^{tree} v1~0
git rev-parse --short HEAD^{tree}
git rev-parse HEAD:b HEAD:d HEAD:d/a HEAD: HEAD~1:b
git rev-parse --verify HEAD^{tree}
git rev-parse HEAD^{blob}; echo "exit $?"
git rev-parse HEAD:nope; echo "exit $?"
git log --stat -p
git log --stat -p --format=%s
git log --stat -p --oneline
git log --shortstat -p -1
git show --stat -p HEAD
