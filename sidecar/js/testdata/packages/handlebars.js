const Handlebars = require('handlebars');
Handlebars.registerHelper('up', s => s.toUpperCase());
const t = Handlebars.compile('{{#each people}}<li>{{up name}} ({{age}})</li>{{/each}}{{!-- c --}}{{{raw}}}');
console.log(t({ people: [{ name: 'ann', age: 3 }, { name: 'bob', age: 5 }], raw: '<b>&</b>' }));
