git init -q
echo a > a && git add a && git commit -q -m a
git diff --quiet; echo "clean $?"
echo b > a
git diff --quiet; echo "dirty $?"
git diff --cached --exit-code; echo "cached $?"
git add a
git diff --cached --quiet; echo "staged $?"
