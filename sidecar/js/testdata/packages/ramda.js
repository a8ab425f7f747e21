const R = require('ramda');
const f = R.pipe(R.filter(R.propSatisfies(R.gt(R.__, 2), 'n')), R.map(R.prop('s')), R.join('-'));
console.log(f([{ n: 1, s: 'a' }, { n: 3, s: 'b' }, { n: 5, s: 'c' }]), R.groupBy(R.prop('k'))([{ k: 'x' }, { k: 'y' }, { k: 'x' }]), R.range(0, 4));
