const ts = require('typescript');
const src = 'enum Color { Red, Green }\nexport const f = (x: number): string => `${x}` as string;\nclass A<T> { constructor(private t: T) {} get v(): T { return this.t } }\n';
const out = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2019 } });
console.log(out.outputText);
console.log(ts.version);
