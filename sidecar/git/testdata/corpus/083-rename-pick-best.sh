git init -q
mkdir src
i=1; while [ $i -le 20 ]; do echo "alpha $i"; i=$((i+1)); done > src/alpha.go
i=1; while [ $i -le 20 ]; do echo "beta $i"; i=$((i+1)); done > src/beta.go
git add . && git commit -q -m init
mkdir lib
sed 's/alpha 3$/ALPHA 3/' src/alpha.go > lib/alpha.go
sed -e 's/beta 1$/B1/' -e 's/beta 2$/B2/' -e 's/beta 3$/B3/' src/beta.go > lib/b.go
git rm -q -r src
git add lib
git status
git diff --cached --stat
git commit -q -m moved
git log --name-status --format=%s -n1
