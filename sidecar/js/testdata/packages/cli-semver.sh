../node_modules/.bin/semver -r '^1.2' 1.2.3 1.3.0 2.0.0 0.9.0
