git init -q
echo a > a
git add a
git commit -q -m first
echo b > b
git add b
GIT_COMMITTER_DATE='@1700000100 +0100' git commit --amend -m 'first, amended'
git log --format='%s %ad %cd' --date=raw
git show --stat
