let got = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { got += d; });
process.stdin.on('end', () => console.log('stdin bytes', got.length));
