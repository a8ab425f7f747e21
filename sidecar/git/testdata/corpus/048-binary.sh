git init -q
printf 'bin\000ary\001\002' > blob.bin
echo text > t.txt
git add .
git commit -m binary
printf 'bin\000ARY\001\002\003' > blob.bin
git diff
git diff --stat
git commit -q -am 'binary change'
git log --stat --format=%s
git show --format=%s
