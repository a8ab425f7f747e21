git init -q
mkdir -p d/e
echo 1 > d/e/f
echo 2 > top
echo 3 > d/g
git add .
git ls-files
git ls-files -s
cd d && git ls-files && git ls-files -s e
