git init -q
printf 'one\ntwo' > f
git add f && git commit -q -m base
printf 'one\ntwo\nthree' > f
git diff
printf 'one\ntwo\n' > f
git diff
git diff --stat
