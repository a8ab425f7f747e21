printf '# Title\n\n*hi* there\n' > in.md && ../node_modules/.bin/marked -i in.md -o out.html && cat out.html
