printf '<p>{{title}}</p>\n' > t.handlebars && ../node_modules/.bin/handlebars t.handlebars -f t.js && head -c 60 t.js && echo
