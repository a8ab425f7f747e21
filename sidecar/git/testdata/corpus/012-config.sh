git init -q
git config user.name 'Config User'
git config user.email config@example.com
git config user.name
git config core.missing; echo "missing $?"
cat .git/config | grep -A2 '\[user\]'
