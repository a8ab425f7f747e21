git init -q
printf 'alpha\nbeta\ngamma\n' > a
echo keep > b
git add .
git commit -q -m base
printf 'alpha\nBETA\ngamma\n' > a
rm b
echo new > c
git diff
git diff --stat
git diff --name-only
git diff --name-status
git diff --exit-code; echo "exit $?"
