printf '{"name": "world", "items": [1, 2]}' > view.json && printf 'Hello {{name}}{{#items}} {{.}}{{/items}}\n' > t.mustache && ../node_modules/.bin/mustache view.json t.mustache
