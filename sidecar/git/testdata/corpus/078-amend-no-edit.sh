git init -q
echo a > a && git add a && git commit -q -m 'keep this message'
echo b > b && git add b
git commit -q --amend --no-edit
git log --format='%s' --stat
git commit --amend -q -m 'new message'
git log --oneline
