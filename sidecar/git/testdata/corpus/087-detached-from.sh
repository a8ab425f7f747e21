# status and branch say "detached at" where the latest checkout left HEAD
# and "detached from" after commits, naming the tag it came from.
git init -q
echo a > f && git add f && git commit -q -m a
git tag v1
echo b > f && git commit -q -am b
git checkout -q v1
git status
git branch
echo c > f && git commit -q -am c
git status
git branch
git checkout -q HEAD~1
git status -b --porcelain
git status | head -1
git checkout -q master
git checkout -
git status | head -1
git reset -q --hard master
git status | head -1
