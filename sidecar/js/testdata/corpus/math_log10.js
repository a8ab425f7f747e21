// Math.log10 as V8 computes it: exact for powers of ten (pretty-bytes picks
// its unit by Math.floor(Math.log10(n) / 3)).
const out = [];
for (let k = -320; k <= 308; k++) out.push(Math.log10(Number(`1e${k}`)));
console.log(out.filter((v, i) => v !== i - 320).length, out.join(' '));
console.log(Math.log10(0), Math.log10(-1), Math.log10(Infinity), Math.log10(NaN), Math.log10(5e-324), Math.log10(1.7976931348623157e308), Math.floor(Math.log10(1e15) / 3));
