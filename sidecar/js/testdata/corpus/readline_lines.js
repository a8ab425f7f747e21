// readline over a stream: line events across chunks and line endings,
// question, the async iterator, readline/promises, process.stdin.
const readline = require('readline');
const { Readable, PassThrough } = require('stream');
const src = Readable.from(['one\ntw', 'o\r', '\nthree\r\nfour\rfive', '\n\nlast'], { objectMode: false });
const rl = readline.createInterface({ input: src, crlfDelay: Infinity });
const lines = [];
rl.on('line', (l) => lines.push(l));
rl.on('close', async () => {
  console.log(JSON.stringify(lines));
  const input = new PassThrough();
  const out = new PassThrough();
  let shown = '';
  out.on('data', (d) => { shown += d; });
  const q = readline.createInterface({ input, output: out });
  const closed = new Promise((r) => q.on('close', r));
  q.question('name? ', (answer) => {
    console.log('answer', JSON.stringify(answer), JSON.stringify(shown));
    q.close();
  });
  input.write('Ada\nrest\n');
  await closed;
  const it = readline.createInterface({ input: Readable.from([Buffer.from('α\nβ'), Buffer.from([0xce]), Buffer.from([0xb3, 0x0a])]) });
  const got = [];
  for await (const line of it) got.push(line);
  console.log(got);
  const rp = require('readline/promises');
  const pin = new PassThrough();
  const prl = rp.createInterface({ input: pin, output: new PassThrough() });
  setTimeout(() => pin.end('42\n'), 1);
  console.log('promise answer', await prl.question('n? '));
  prl.close();
  const sin = readline.createInterface({ input: process.stdin });
  const stdinLines = [];
  sin.on('line', (l) => stdinLines.push(l));
  sin.on('close', () => console.log('stdin lines', stdinLines.length, typeof readline.cursorTo, rl.closed));
});
