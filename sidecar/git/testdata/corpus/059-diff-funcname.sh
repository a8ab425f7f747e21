git init -q
printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("a")\n\tfmt.Println("b")\n\tfmt.Println("c")\n\tfmt.Println("d")\n\tfmt.Println("e")\n}\n' > main.go
git add . && git commit -q -m base
sed 's/"d"/"D"/' main.go > t && mv t main.go
git diff
