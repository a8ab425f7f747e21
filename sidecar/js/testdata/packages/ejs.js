const ejs = require('ejs'), fs = require('fs');
fs.writeFileSync('page.ejs', '<ul><% for (const i of items) { %><li><%= i %></li><% } %></ul><%- include("foot.ejs") %>');
fs.writeFileSync('foot.ejs', '<footer><%= year %></footer>');
ejs.renderFile('page.ejs', { items: ['a', '<b>'], year: 2024 }, (err, html) => {
  if (err) throw err;
  fs.writeFileSync('page.html', html);
  console.log(html);
});
