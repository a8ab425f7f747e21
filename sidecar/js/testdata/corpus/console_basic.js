console.log(1, 'a', true, null, undefined, 1.5, -0, 10n)
