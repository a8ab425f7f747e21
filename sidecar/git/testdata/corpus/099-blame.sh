git init -q -b main
printf 'one\ntwo\nthree\n' > f && git add f && git commit -q -m first
GIT_AUTHOR_NAME='Another Author' git commit -q --allow-empty -m empty
printf 'one\n2\nthree\nfour\n' > f && GIT_AUTHOR_NAME='Another Author' GIT_AUTHOR_DATE='1706961906 -0800' git commit -q -am second
printf 'zero\none\n2\nthree\nfour\n' > f && git commit -q -am third
for i in 1 2 3 4 5 6 7 8 9 10; do echo "line $i" >> f; done
git commit -q -am fourth
git blame f
git blame -- f
mkdir sub && cd sub && git blame ../f | head -3 && cd ..
git blame nope; echo "exit $?"
seq 1 5000 > big && git add big && git commit -q -m big
git blame big | head -1
