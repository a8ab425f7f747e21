// make demo-publish: draw a PNG (a gradient with a circle) in plain
// JavaScript, write it to the workspace and print a public link to it.
const fs = require('node:fs/promises');
const { publish } = require('sqlfs:publish');

const W = 64, H = 64;
const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (buf) => {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type, data) => {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  Buffer.from(data).copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
};

// Raw RGB scanlines, each after a filter byte 0.
const raw = Buffer.alloc(H * (1 + 3 * W));
for (let y = 0; y < H; y++) {
  for (let x = 0; x < W; x++) {
    const o = y * (1 + 3 * W) + 1 + 3 * x;
    const inCircle = (x - 32) ** 2 + (y - 32) ** 2 < 400;
    raw[o] = inCircle ? 255 : x * 4;
    raw[o + 1] = inCircle ? 200 : y * 4;
    raw[o + 2] = inCircle ? 0 : 128;
  }
}
// A zlib stream of stored (uncompressed) blocks.
const blocks = [Buffer.from([0x78, 0x01])];
for (let i = 0; i < raw.length; i += 65535) {
  const part = raw.subarray(i, i + 65535);
  const hdr = Buffer.alloc(5);
  hdr[0] = i + 65535 >= raw.length ? 1 : 0;
  hdr.writeUInt16LE(part.length, 1);
  hdr.writeUInt16LE(~part.length & 0xffff, 3);
  blocks.push(hdr, part);
}
let a = 1, b = 0;
for (const v of raw) { a = (a + v) % 65521; b = (b + a) % 65521; }
const adler = Buffer.alloc(4);
adler.writeUInt32BE(((b << 16) | a) >>> 0, 0);
blocks.push(adler);

const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(W, 0);
ihdr.writeUInt32BE(H, 4);
ihdr[8] = 8; // bit depth
ihdr[9] = 2; // RGB
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', ihdr), chunk('IDAT', Buffer.concat(blocks)), chunk('IEND', Buffer.alloc(0)),
]);

await fs.mkdir('out', { recursive: true });
await fs.writeFile('out/chart.png', png);
console.log(await publish('out/chart.png', { ttl: 600 }));
