// node:readline and node:readline/promises without a terminal: an
// Interface reads lines from a stream ('line' events, question, async
// iteration) and writes prompts to its output. Cursor functions write
// Node's escape sequences.
const EE = require('events');
const { StringDecoder } = require('string_decoder');

class Interface extends EE {
  constructor(input, output, completer, terminal) {
    super();
    const o = input && input.input !== undefined ? input : { input, output, completer, terminal };
    this.input = o.input;
    this.output = o.output;
    this.terminal = !!o.terminal;
    this.crlfDelay = Math.max(100, o.crlfDelay ?? 100);
    this.line = '';
    this.cursor = 0;
    this.history = [];
    this.closed = false;
    this.paused = false;
    this._prompt = o.prompt ?? '> ';
    this._question = null;
    this._buf = '';
    this._decoder = new StringDecoder('utf8');
    this._ondata = (d) => this._write(typeof d === 'string' ? d : this._decoder.write(d));
    this._onend = () => {
      let rest = this._buf + this._decoder.end();
      this._buf = '';
      if (rest.endsWith('\r')) rest = rest.slice(0, -1);
      if (rest.length) this._line(rest);
      this.close();
    };
    this.input.on('data', this._ondata);
    this.input.on('end', this._onend);
    if (typeof this.input.resume === 'function') this.input.resume();
  }
  _write(s) {
    let str = this._buf + s;
    let held = '';
    if (str.endsWith('\r')) { held = '\r'; str = str.slice(0, -1); }
    const lines = str.split(/\r\n|\n|\r/);
    this._buf = lines.pop() + held;
    for (const l of lines) {
      if (this.closed) return;
      this._line(l);
    }
  }
  _line(l) {
    const q = this._question;
    if (q) { this._question = null; q(l); } else this.emit('line', l);
  }
  setPrompt(p) { this._prompt = p; }
  getPrompt() { return this._prompt; }
  prompt() {
    if (this.closed) throw Object.assign(new Error('readline was closed'), { code: 'ERR_USE_AFTER_CLOSE' });
    if (this.paused) this.resume();
    if (this.output && this.output.write) this.output.write(this._prompt);
  }
  question(query, o, cb) {
    if (typeof o === 'function') cb = o;
    if (this.closed) throw Object.assign(new Error('readline was closed'), { code: 'ERR_USE_AFTER_CLOSE' });
    if (this._question) { this.prompt(); return; }
    if (this.paused) this.resume();
    this._question = cb;
    if (this.output && this.output.write) this.output.write(query);
  }
  write(data) {
    if (this.closed) throw Object.assign(new Error('readline was closed'), { code: 'ERR_USE_AFTER_CLOSE' });
    if (data != null) this._write(String(data));
  }
  pause() {
    if (this.paused) return this;
    if (typeof this.input.pause === 'function') this.input.pause();
    this.paused = true;
    this.emit('pause');
    return this;
  }
  resume() {
    if (!this.paused) return this;
    if (typeof this.input.resume === 'function') this.input.resume();
    this.paused = false;
    this.emit('resume');
    return this;
  }
  close() {
    if (this.closed) return;
    this.pause();
    this.input.removeListener('data', this._ondata);
    this.input.removeListener('end', this._onend);
    this.closed = true;
    this.emit('close');
  }
  getCursorPos() { return { rows: 0, cols: this.cursor }; }
  [Symbol.asyncIterator]() {
    const queue = [];
    let wake = null;
    let done = this.closed;
    const notify = () => { if (wake) { const w = wake; wake = null; w(); } };
    const online = (l) => { queue.push(l); notify(); };
    const onclose = () => { done = true; notify(); };
    this.on('line', online);
    this.on('close', onclose);
    const stop = () => { this.removeListener('line', online); this.removeListener('close', onclose); };
    const it = {
      next: () => new Promise((resolve) => {
        const attempt = () => {
          if (queue.length) resolve({ value: queue.shift(), done: false });
          else if (done) { stop(); resolve({ value: undefined, done: true }); }
          else wake = attempt;
        };
        attempt();
      }),
      return: () => { stop(); this.close(); return Promise.resolve({ value: undefined, done: true }); },
      [Symbol.asyncIterator]() { return this; },
    };
    return it;
  }
}

const esc = (stream, s, cb) => {
  if (stream && typeof stream.write === 'function') return stream.write(s, cb);
  if (typeof cb === 'function') process.nextTick(cb, null);
  return true;
};
const cursorTo = (stream, x, y, cb) => {
  if (typeof y === 'function') { cb = y; y = undefined; }
  return esc(stream, typeof y !== 'number' ? `\x1b[${x + 1}G` : `\x1b[${y + 1};${x + 1}H`, cb);
};
const moveCursor = (stream, dx, dy, cb) => {
  let s = '';
  if (dx < 0) s += `\x1b[${-dx}D`; else if (dx > 0) s += `\x1b[${dx}C`;
  if (dy < 0) s += `\x1b[${-dy}A`; else if (dy > 0) s += `\x1b[${dy}B`;
  return esc(stream, s, cb);
};
const clearLine = (stream, dir, cb) => esc(stream, dir < 0 ? '\x1b[1K' : dir > 0 ? '\x1b[0K' : '\x1b[2K', cb);
const clearScreenDown = (stream, cb) => esc(stream, '\x1b[0J', cb);

class PromisesInterface extends Interface {
  question(query, o) {
    return new Promise((resolve) => super.question(query, o, resolve));
  }
}

const promises = {
  Interface: PromisesInterface,
  createInterface: (input, output, completer, terminal) => new PromisesInterface(input, output, completer, terminal),
};

module.exports = {
  Interface,
  createInterface: (input, output, completer, terminal) => new Interface(input, output, completer, terminal),
  cursorTo, moveCursor, clearLine, clearScreenDown,
  emitKeypressEvents() {},
  promises,
};
