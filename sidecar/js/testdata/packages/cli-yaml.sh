printf 'a: 1\nb:\n  - x\n' | ../node_modules/.bin/yaml --json
