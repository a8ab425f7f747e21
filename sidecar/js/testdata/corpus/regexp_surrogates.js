// UTF-16 mode regexps whose character classes differ only in surrogates: goja's
// regexp2 keyed its set and string tables by their UTF-8 text, where every
// surrogate is U+FFFD, so [\uDC00-\uDFFF] became a second [\uD800-\uDBFF] and
// he.encode escaped an astral character as two halves.
const s = 'a\uD834\uDF06b \uD83D\uDE00!';
const show = (x) => JSON.stringify(x);
console.log(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, (m) => '<' + m.codePointAt(0).toString(16) + '>'));
console.log(show(s.match(/[\uD834\uD835][\uDF06\uDF07]/)), show(s.match(/([\uD800-\uDBFF])([\uDC00-\uDFFF])/).slice(1)));
console.log(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]|[^a-z ]/g, (m) => '[' + m.length + ']'));
console.log(show('x\uD834\uDF06y\uD835\uDF07z'.split(/x\uD834\uDF06|y\uD835\uDF07/)));
console.log(/^[\uD800-\uDBFF][\uDC00-\uDFFF]$/.test('\uD834\uDF06'), /^[\uDC00-\uDFFF]/.test('\uD834'));
console.log(show('\uD834\uDF06\uDF06'.match(/[\uDC00-\uDFFF]+/g)), '😀x😀'.replace(/\uD83D\uDE00/g, '*'));
