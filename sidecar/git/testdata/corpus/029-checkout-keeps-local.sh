git init -q
echo base > f && echo k > keep && git add . && git commit -q -m base
git checkout -b other
echo o > o && git add o && git commit -q -m other
git checkout master
echo local >> keep
git checkout other
git status -s
cat keep
