git init -q
mkdir -p pkg/sub logs
printf 'tmp/\n' > .gitignore
printf '*.gen.go\n' > pkg/.gitignore
echo x > pkg/a.go && echo y > pkg/a.gen.go && echo z > pkg/sub/b.gen.go
mkdir -p tmp pkg/tmp && echo t > tmp/t && echo t > pkg/tmp/t
echo l > logs/today.log
printf '*.log\n' > .git/info/exclude
git status -s -uall
git add .
git status -s
git ls-files
