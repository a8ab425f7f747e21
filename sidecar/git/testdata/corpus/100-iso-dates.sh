git init -q -b main
for d in '2005-04-07T22:13:13-0800' '2005-04-07T22:13:13+0530' '2005-04-07 22:13:13-0800' '2005-04-07T22:13:13-08:00' '2005-04-07T22:13:13Z' '2005-04-07T22:13:13.123-0800' '2005-04-07T22:13:13 -0800' '2005-04-07T22:13:13' 'Thu, 07 Apr 2005 22:13:13 +0200'; do
  GIT_AUTHOR_DATE="$d" GIT_COMMITTER_DATE="$d" git commit -q --allow-empty -m "$d"
  git log -1 --format='%ad | %cd' --date=raw
done
TZ=Asia/Kolkata GIT_AUTHOR_DATE='2005-04-07 22:13:13' git commit -q --allow-empty -m local
git log -1 --format='%ad' --date=raw
GIT_AUTHOR_DATE='not a date' git commit -q --allow-empty -m bad; echo "exit $?"
git log --format='%ai %ci %s'
