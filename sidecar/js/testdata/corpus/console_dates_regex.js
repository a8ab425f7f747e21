console.log(new Date(0), /ab+c/gi, [new Date(86400000)])
