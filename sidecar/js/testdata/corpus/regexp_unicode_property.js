// Unicode property escapes: goja used to take \p{L} for a literal "p{L}".
const t = (re, s) => console.log(String(re), JSON.stringify(s), re.test(s));
t(/\p{L}/u, 'a'); t(/\p{L}/u, '1'); t(/^\p{Lu}\p{Ll}+$/u, 'Élan'); t(/\P{L}/u, 'a'); t(/^[\p{L}\d]+$/u, 'ab12');
t(/\p{Script=Greek}/u, 'α'); t(/\p{sc=Cyrillic}/u, 'ж'); t(/\p{Letter}/u, 'ß'); t(/\p{General_Category=Decimal_Number}/u, '٣');
t(/^\p{Alphabetic}+$/u, 'abcÅ'); t(/\p{White_Space}/u, '\u2003'); t(/^\p{Any}$/u, '𝌆'); t(/^\p{ASCII}+$/u, 'abc'); t(/^\p{ASCII}+$/u, 'é');
t(/^[^\p{L}]+$/u, '12 3'); t(/\p{Lowercase}/u, 'A'); t(/\p{Uppercase}/u, 'A'); t(/^\P{Any}$/u, 'x');
console.log('héllo wörld, привет'.replace(/\p{L}+/gu, (w) => w.toUpperCase()));
console.log('a1b2٣'.match(/\p{N}/gu), 'x-y_z'.split(/\P{L}/u));
for (const src of ['\\p{Foo}', '\\p{Script=Nope}', '\\p{L', '\\p']) {
  try { new RegExp(src, 'u'); console.log('compiled', src); } catch (e) { console.log(src, e.name); }
}
console.log(/\p{L}/.test('p{L}'), /\p{L}/.test('a'));
