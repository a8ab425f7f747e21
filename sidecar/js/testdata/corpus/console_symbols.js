console.log(Symbol('s'), { [Symbol('k')]: 1 }, [undefined, null])
