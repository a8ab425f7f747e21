git init -q -b main
mkdir -p src/lib docs
printf 'package main\n\nfunc main() {\n\tprintln("Hello")\n}\n' > src/main.go
printf 'package lib\n\n// hello helps\nfunc Hello() string { return "hello" }\n' > src/lib/lib.go
printf 'Say hello.\nNothing else.\n' > docs/README
printf 'hello untracked\n' > untracked.txt
git add src docs && git commit -q -m one
git grep hello
git grep -n -i hello
git grep -c hello
git grep -l Hello
git grep -L hello
git grep -w -e Hello -e Nothing
git grep -E 'He(l)+o' -- src
git grep hello docs
git grep -C1 println
git grep nomatch; echo "exit $?"
cd src && git grep -n package && cd ..
echo 'hello, changed' >> docs/README
git grep -c hello docs
rm docs/README
git grep hello
git grep; echo "exit $?"
