git init -q
git commit --allow-empty -m 'root empty'
git commit --allow-empty -m 'second empty'
git log --oneline
git status
