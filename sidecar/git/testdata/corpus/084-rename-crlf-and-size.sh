git init -q
printf 'one\r\ntwo\r\nthree\r\nfour\r\n' > crlf.txt
i=1; while [ $i -le 10 ]; do echo "short $i"; i=$((i+1)); done > small.txt
git add . && git commit -q -m init
git mv crlf.txt unix.txt
printf 'one\ntwo\nthree\nfour\n' > unix.txt
git mv small.txt big.txt
i=1; while [ $i -le 40 ]; do echo "short $i"; i=$((i+1)); done > big.txt
git add -A
git status -s
git commit -q -m renames
git show --name-status --format=%s
