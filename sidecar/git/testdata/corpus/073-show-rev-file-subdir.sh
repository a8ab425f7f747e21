git init -q
mkdir -p src && echo code > src/main.c && git add . && git commit -q -m init
git show HEAD:src/main.c
cd src && git show HEAD:./main.c
git show HEAD:missing; echo "exit $?"
