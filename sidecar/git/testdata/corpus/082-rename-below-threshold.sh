git init -q
printf 'a\nb\nc\nd\n' > one.txt
git add . && git commit -q -m init
git rm -q one.txt
printf 'a\nx\ny\nz\nw\n' > two.txt
git add two.txt
git status -s
git diff --cached --name-status
git commit -q -m replace
git log --stat --format=%s -n1
