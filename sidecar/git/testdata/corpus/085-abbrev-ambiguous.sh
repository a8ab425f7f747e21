# The blobs of "4827" and "11742" share their first 7 hex digits (51d2738),
# so git prints 8 wherever it abbreviates either.
git init -q
echo 4827 > a
echo 11742 > b
git add a b
git diff --cached
git commit -q -m two
echo 4827 > b
git diff
git show --format=%s
git rev-parse --short=4 HEAD
