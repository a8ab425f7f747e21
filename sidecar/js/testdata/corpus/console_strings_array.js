console.log(['apple', 'banana', 'cherry', 'date', 'elderberry', 'fig', 'grape', 'honeydew'])
