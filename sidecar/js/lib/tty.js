// node:tty: a program's streams are never terminals here.
module.exports = {
  isatty: () => false,
  ReadStream: class ReadStream { constructor() { throw native.unsupported('tty.ReadStream'); } },
  WriteStream: class WriteStream { constructor() { throw native.unsupported('tty.WriteStream'); } },
};
