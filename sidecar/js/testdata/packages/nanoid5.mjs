import { nanoid, customAlphabet } from 'nanoid5';
console.log(nanoid(10).length, customAlphabet('0123456789', 6)().match(/^\d{6}$/) !== null);
