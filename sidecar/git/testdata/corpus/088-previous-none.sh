# No earlier checkout: switch - and checkout - fail as git's do.
git init -q
echo a > f && git add f && git commit -q -m a
git switch -
echo "switch: $?"
git checkout -
echo "checkout: $?"
git rev-parse @{-1}
echo "rev-parse: $?"
