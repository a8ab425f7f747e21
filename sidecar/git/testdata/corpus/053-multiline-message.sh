git init -q
echo a > a && git add a
git commit -m 'subject line' -m 'body paragraph one
continues here' -m 'second paragraph'
git log
git log --format='%s|%b|'
git log --format=%B
