# stderr: unstable (the built-in refuses three-way merges with its own message)
git init -q
echo base > f && git add f && git commit -q -m base
git branch side
echo main > m && git add m && git commit -q -m main
git checkout side
echo side > s && git add s && git commit -q -m side
git merge --ff-only master; echo "exit $?"
git log --oneline
git status -s
