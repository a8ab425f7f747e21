const he = require('he');
console.log(he.encode('foo © bar ≠ baz 𝌆 qux'), he.decode('&lt;p&gt;&amp;copy; &#x1D306; &nbsp;x&lt;/p&gt;'), he.escape('<img src="x">'));
