const Mustache = require('mustache');
console.log(Mustache.render('{{#items}}- {{name}}{{#last}}!{{/last}}\n{{/items}}{{^none}}empty{{/none}} {{&html}} {{html}}', { items: [{ name: 'a' }, { name: 'b', last: true }], html: '<i>' }));
