git init -q
echo base > base && git add base && git commit -q -m base
git checkout -q -b side
echo side > clash && git add clash && git commit -q -m side
git checkout -q master
echo mine > clash
git checkout side; echo "exit $?"
cat clash
