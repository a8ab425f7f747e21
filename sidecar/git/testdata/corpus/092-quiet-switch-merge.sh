git init -q
echo a > a && git add a && git commit -q -m one
git switch -q -c topic
echo b > b && git add b && git commit -q -m two
git switch -q master
git switch --quiet -
git switch -q master
git merge -q topic
git merge -q topic
git merge --quiet topic
git switch -q -c other HEAD~1
git switch -q --detach topic
git switch -q master; echo "exit $?"
git status -sb
