../node_modules/.bin/tsc --version
