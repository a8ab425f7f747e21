git init -q
echo base > f && git add f && git commit -q -m base
git switch -c dev
echo dev > d && git add d && git commit -q -m dev
git switch master
ls
git switch dev
ls
git switch nope; echo "exit $?"
git switch -c dev; echo "exit $?"
