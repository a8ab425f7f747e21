printf '<h1><%%= title %%></h1>\n' > t.ejs && ../node_modules/.bin/ejs t.ejs -i '{"title":"Hi"}' -o out.html && cat out.html
