const Decimal = require('decimal.js');
console.log(new Decimal(0.1).plus(0.2).toString(), new Decimal(2).sqrt().toFixed(30), Decimal.pow(3, 100).toString(), new Decimal('1e-40').times(3).toExponential());
