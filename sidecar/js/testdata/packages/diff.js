const Diff = require('diff');
console.log(Diff.createTwoFilesPatch('a.txt', 'b.txt', 'one\ntwo\nthree\n', 'one\n2\nthree\nfour\n', 'old', 'new'));
console.log(Diff.diffWords('the quick fox', 'the slow fox').map(p => (p.added ? '+' : p.removed ? '-' : '=') + p.value));
