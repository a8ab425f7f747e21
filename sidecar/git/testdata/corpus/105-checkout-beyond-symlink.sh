mkdir elsewhere && git init -q r && cd r
echo base > base && git add base && git commit -q -m base
git checkout -q -b other
mkdir a && echo payload > a/f && git add a && git commit -q -m 'add a/f'
git checkout -q master
ln -s ../elsewhere a
git checkout other
echo "rc=$?"
ls ../elsewhere
git checkout -f other
echo "rc=$?"
ls ../elsewhere
cat a/f
git status --short
rm -rf a && ln -s ../elsewhere a && echo mine > ../elsewhere/f
git status --short
git checkout -f master
echo "rc=$?"
ls ../elsewhere
rm a && git checkout -q other && rm -rf a && ln -s ../elsewhere a
git reset -q --hard
echo "rc=$?"
ls -F . a ../elsewhere
git checkout -q -b link master && ln -s base a && git add a && git commit -q -m link
git checkout other
echo "rc=$?"
ls -F . a
git checkout link
echo "rc=$?"
ls -F
