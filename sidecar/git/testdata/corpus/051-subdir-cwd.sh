git init -q
mkdir -p a/b c
echo 1 > a/b/f && echo 2 > c/g && echo 3 > top
git add .
git commit -q -m init
cd a
echo x >> b/f
echo y >> ../c/g
echo new > b/new
git status
git status -s
git status --porcelain
git add b
git status -s
git diff --cached --stat
git ls-files
cd b && git ls-files && git diff HEAD --name-only
