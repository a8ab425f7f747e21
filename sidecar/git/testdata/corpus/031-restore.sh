git init -q
echo base > f && git add f && git commit -q -m base
echo changed > f
git add f
git status -s
git restore --staged f
git status -s
git restore f
git status -s
cat f
git restore nope; echo "exit $?"
