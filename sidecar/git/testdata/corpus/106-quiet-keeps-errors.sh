git init -q
echo base > base && git add base && git commit -q -m base
git checkout -q -b other
echo f > f && git add f && git commit -q -m f
git checkout -q master
echo mine > f
git checkout -q other
echo "rc=$?"
git switch -q other
echo "rc=$?"
git checkout -q nosuch
echo "rc=$?"
git checkout -q -b master
echo "rc=$?"
