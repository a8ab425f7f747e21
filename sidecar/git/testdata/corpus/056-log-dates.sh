git init -q
echo a > a && git add a
GIT_AUTHOR_DATE='2005-04-07T22:13:13+02:00' GIT_COMMITTER_DATE='Thu, 07 Apr 2005 22:13:13 +0200' git commit -q -m dated
git log --format='%ad|%at|%ai|%aI|%cd|%ct|%ci|%cI'
git log --date=iso --format=%ad
git log --date=raw --format=%cd
git log --date=short --format=%ad
git log --date=unix --format=%ad
git log -n1
