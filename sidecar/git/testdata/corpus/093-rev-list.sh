git init -q
echo a > a && git add a && git commit -q -m one
echo b > b && git add b && GIT_COMMITTER_DATE='@1700000100 +0100' git commit -q -m two
git switch -q -c topic
echo c > c && git add c && GIT_COMMITTER_DATE='@1700000200 +0100' git commit -q -m three
git switch -q master
echo d > d && git add d && GIT_COMMITTER_DATE='@1700000300 +0100' git commit -q -m four
git tag -a -m t v1 HEAD~1
git rev-list HEAD
git rev-list --count HEAD
git rev-list master..topic
git rev-list --count topic..master
git rev-list topic ^master
git rev-list master...topic
git rev-list --count master...topic
git rev-list --left-right --count master...topic
git rev-list --all
git rev-list --all --count
git rev-list --reverse HEAD
git rev-list -n 1 topic
git rev-list --max-count=2 --all
git rev-list -1 v1
git rev-list v1..topic
git rev-list nope; echo "exit $?"
git log --oneline master...topic
git log --format=%s ^topic master
