module github.com/dlclark/regexp2/v2

go 1.25
