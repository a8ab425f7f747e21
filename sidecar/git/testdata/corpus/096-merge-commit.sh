git init -q -b main
echo a > a && echo b > b && mkdir d && echo e > d/e && git add . && git commit -q -m one
git switch -q -c topic
echo x >> a && echo t > t && git add . && git commit -q -m 'topic change'
git rm -q d/e && git commit -q -m 'drop e'
git switch -q main
echo y >> b && git commit -q -am 'main change'
echo dirty >> a
git merge topic; echo "exit $?"
git checkout -- a
git merge topic
git log --format='%h %p %s' --all
git status --short
git merge topic
git switch -q -c feature HEAD~1
echo f > f && git add f && git commit -q -m f
git merge -q topic
git log -1 --format=%s
git merge --ff-only main; echo "exit $?"
