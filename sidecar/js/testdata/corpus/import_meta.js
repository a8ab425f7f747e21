const fs = require('fs');
fs.writeFileSync('m.mjs', "import path from 'path';\nconsole.log(import.meta.url.startsWith('file:///'), import.meta.url.endsWith('/m.mjs'), path.basename(import.meta.filename), import.meta.dirname === process.cwd());\n");
console.log(require('child_process').execSync('node m.mjs', { encoding: 'utf8' }).trim());
