git init -q
i=1; while [ $i -le 30 ]; do echo "line number $i of the original file"; i=$((i+1)); done > orig.txt
git add . && git commit -q -m init
git mv orig.txt moved.txt
sed 's/line number 7 /LINE NUMBER SEVEN /' moved.txt > t && mv t moved.txt
git add moved.txt
git status
git status -s
git status --porcelain=v2
git diff --cached
git diff --cached --stat
git diff --cached --name-status
git commit -m 'move and edit'
git show --stat --format=%s
