printf 'a: 1\nb: [x, y]\n' > in.yaml && ../node_modules/.bin/js-yaml in.yaml > out.json && cat out.json
