git init -q
mkdir -p x/y/z empty
echo 1 > x/y/z/deep
echo t > t
git add t
git commit -q -m t
git status
git status -s
git status -s -uall
git status --porcelain=v2
