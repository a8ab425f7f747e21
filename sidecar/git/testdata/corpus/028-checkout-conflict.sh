git init -q
echo base > f && git add f && git commit -q -m base
git branch other
echo changed > f && git commit -q -am changed
echo local > f
git checkout other; echo "exit $?"
cat f
git status -s
