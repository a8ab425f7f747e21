git init -q
printf '*.log\nbuild/\n!keep.log\n' > .gitignore
echo a > a.log
echo k > keep.log
mkdir build && echo o > build/out
echo src > main.c
git status
git status -s
git add .
git status --porcelain
git add a.log; echo "add ignored $?"
git add -f a.log
git status -s
