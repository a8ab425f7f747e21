git init -q
echo base > f && git add f && git commit -q -m base
git checkout -q -b feature
echo more >> f && echo n > new && git add . && git commit -q -m feature
git checkout master
git merge feature
git log --oneline
git merge feature
