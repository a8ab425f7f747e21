module github.com/winfsp/cgofuse

go 1.17
