const { v4, v5, validate, version, parse } = require('uuid');
const id = v4();
console.log(validate(id), version(id), id.length);
console.log(v5('hello', v5.DNS), Array.from(parse('6ba7b810-9dad-11d1-80b4-00c04fd430c8')).slice(0, 4));
