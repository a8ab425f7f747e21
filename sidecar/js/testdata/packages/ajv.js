const Ajv = require('ajv');
const ajv = new Ajv({ allErrors: true });
const validate = ajv.compile({ type: 'object', properties: { n: { type: 'integer', minimum: 3 }, s: { type: 'string', pattern: '^a' } }, required: ['n'] });
console.log(validate({ n: 4, s: 'abc' }), validate({ n: 1, s: 'x' }), validate.errors.map(e => e.instancePath + ' ' + e.message));
