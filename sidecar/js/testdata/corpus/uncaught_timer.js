setTimeout(() => { console.log('in timer'); null.x }, 1)
