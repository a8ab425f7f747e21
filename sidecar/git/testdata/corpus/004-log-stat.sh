git init -q
printf 'a\nb\nc\n' > f
echo x > g
git add .
git commit -q -m base
printf 'a\nB\nc\nd\n' > f
rm g
git add -A
git commit -m change
git log --stat
git log --oneline --stat
git log --name-only --format=%s
git log --name-status --oneline
