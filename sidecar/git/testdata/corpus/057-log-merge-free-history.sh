git init -q
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
  echo $i > f
  git add f
  GIT_COMMITTER_DATE="@$((1700000000 + i)) +0000" GIT_AUTHOR_DATE="@$((1700000000 + i)) +0000" git commit -q -m "commit $i"
done
git log --oneline
git log --format='%h %p %s' -n 5
git log --pretty=oneline -n 3
git log --pretty=short -n 2
git log --pretty=full -n 1
