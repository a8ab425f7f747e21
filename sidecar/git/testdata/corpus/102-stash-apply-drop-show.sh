git init -q -b main
printf '1\n2\n3\n4\n5\n6\n7\n8\n9\n' > a && echo b > b && git add . && git commit -q -m one
git stash show; echo "exit $?"
git stash drop; echo "exit $?"
git stash apply; echo "exit $?"
echo 10 >> a && echo b2 >> b && git stash
echo n > n && git add n && rm b && git stash push -m second
git stash list
git stash show
git stash show stash@{1}
git stash show -p
git stash show -p 1
git stash show --stat stash@{1}
git stash show stash@{7}; echo "exit $?"
git stash apply
git status --short
git stash list
git reset -q --hard
git stash apply stash@{1}; echo "exit $?"
git stash apply -q 1; echo "exit $?"
git reset -q --hard
git stash drop stash@{5}; echo "exit $?"
git stash drop foo; echo "exit $?"
git stash apply 5; echo "exit $?"
git stash drop -q
git stash list
echo c > c && git add c && git stash -q
git stash pop stash@{1}
git stash list
git reset -q --hard
git stash drop stash@{0}
git stash list; echo "exit $?"
git stash drop; echo "exit $?"
sed -i 's/^9$/9x/' a && git stash -q
sed -i 's/^1$/1y/' a && git commit -q -am two
git stash apply; echo "exit $?"
cat a
git stash pop -q; echo "exit $?"
git stash list
