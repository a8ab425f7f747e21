git init -q
echo hello > a.txt
mkdir -p src/lib
echo 'package lib' > src/lib/lib.go
git status
git add a.txt
git status
git status -s
git add .
git commit -m 'first commit'
git status
