../node_modules/.bin/uuid v5 hello 6ba7b810-9dad-11d1-80b4-00c04fd430c8
