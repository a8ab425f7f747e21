const fs = require('fs');
fs.writeFileSync('.env', 'A=1\nB="two words"\n# c\nC=${A}x\nMULTI="l1\\nl2"\n');
const parsed = require('dotenv').config({ path: '.env' }).parsed;
console.log(parsed, process.env.B);
