const b = Buffer.alloc(8); b.write('IHDR', 4, 'latin1'); b.write('ab'); b.write('zz', 2, 1, 'utf8'); console.log(b)
