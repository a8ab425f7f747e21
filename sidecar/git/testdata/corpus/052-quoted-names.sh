git init -q
echo 1 > 'with space'
echo 2 > "$(printf 'tab\there')"
echo 3 > 'quote"d'
echo 4 > 'caf€'
git status -s
git add .
git status --porcelain
git commit -q -m names
git ls-files
