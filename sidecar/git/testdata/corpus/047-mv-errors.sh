git init -q
echo a > a && echo b > b && echo u > untracked && git add a b && git commit -q -m init
git mv a b; echo "exit $?"
git mv nope x; echo "exit $?"
git mv untracked x; echo "exit $?"
mkdir dir
git mv a dir
git status -s
