# An argument that is neither a revision nor a path is git's "ambiguous
# argument" error, whatever the mode; a path is reset in the index.
git init -q
echo a > f && git add f && git commit -q -m a
git reset --hard HEAD~1
echo "hard: $?"
git reset HEAD~1
echo "mixed: $?"
git reset --soft nosuch
echo "soft: $?"
echo b > f && git add f
git reset -q f
git status -s
