console.log('%s is %d years and %i, %j %%', 'Bob', 42.5, 42.9, { a: 1 }); console.log('%o', [1])
