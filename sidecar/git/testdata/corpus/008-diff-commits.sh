git init -q
echo 1 > f
git add f && git commit -q -m 1
echo 2 > f
echo x > x
git add . && git commit -q -m 2
echo 3 > f
git commit -q -am 3
git diff HEAD~2 HEAD
git diff HEAD~2..HEAD --stat
git diff HEAD~1 HEAD --name-status
git diff HEAD~2 -- x
