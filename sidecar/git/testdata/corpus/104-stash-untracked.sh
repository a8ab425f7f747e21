git init -q -b main
echo a > a && echo ig > .gitignore && git add . && git commit -q -m one
echo u > u && mkdir -p nd/sub && echo x > nd/sub/x && echo i > ig && printf '#!/bin/sh\n' > run && chmod +x run
git stash
git stash -u
ls -A
git status --short
git stash list
git stash show; echo "exit $?"
git stash pop
git status --short
ls -l run | cut -c1-10
git stash -u -q
echo z >> a && git stash push --include-untracked -m both
git stash -u; echo "exit $?"
git stash list
git stash apply --index
git status --short
git reset -q --hard
rm -rf nd u run
git stash pop stash@{1} -q; echo "exit $?"
cat nd/sub/x u
git stash list
rm -rf nd u run
echo y >> a && git stash -u -q
git stash pop -q
git status --short
git stash drop -q
git stash list; echo "exit $?"
git log --oneline --all
