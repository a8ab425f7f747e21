git init -q
mkdir -p src/pkg
echo a > src/pkg/a.go && echo b > src/pkg/b.go && git add . && git commit -q -m init
git mv src/pkg src/lib
git status -s
git commit -q -m moved
git show --stat --format=%s
git log --name-status --format=%s -n1
