setTimeout(() => console.log('t2'), 300); setTimeout(() => console.log('t1'), 1); Promise.resolve().then(() => console.log('p')); process.nextTick(() => console.log('tick')); console.log('sync')
