git init -q
mkdir d && echo 1 > d/a && echo 2 > d/b && git add . && git commit -q -m init
rm d/a && echo 3 > d/c
git add d
git status -s
git commit -q -m update
git log --stat --format=%s -n1
