mkdir elsewhere && echo out > elsewhere/f && git init -q r && cd r
echo base > base && git add base && git commit -q -m base
ln -s ../elsewhere a
git add a/f
echo "rc=$?"
git status --short
git add a
git commit -q -m link
git rm -q a/f
echo "rc=$?"
ls ../elsewhere
git ls-files
