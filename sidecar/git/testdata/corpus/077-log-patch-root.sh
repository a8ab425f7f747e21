git init -q
printf 'a\nb\n' > f && mkdir d && echo x > d/x
git add . && git commit -q -m root
git log -p --format=%s
git show --stat
git log --name-only --format=%s
