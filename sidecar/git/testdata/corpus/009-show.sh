git init -q
echo hi > greeting
git add greeting
git commit -q -m 'say hi'
echo bye >> greeting
git commit -q -am 'say bye'
git show
git show --stat HEAD~1
git show HEAD:greeting
git show HEAD~1:greeting
git show --oneline --name-only
