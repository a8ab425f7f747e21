// node:events
function EventEmitter(opts) { EventEmitter.init.call(this, opts); }
EventEmitter.init = function () {
  if (!this._events || this._events === Object.getPrototypeOf(this)._events) {
    this._events = Object.create(null);
    this._eventsCount = 0;
  }
  this._maxListeners = this._maxListeners || undefined;
};
EventEmitter.defaultMaxListeners = 10;
EventEmitter.prototype.setMaxListeners = function (n) { this._maxListeners = n; return this; };
EventEmitter.prototype.getMaxListeners = function () { return this._maxListeners ?? EventEmitter.defaultMaxListeners; };
function add(target, type, listener, prepend) {
  if (typeof listener !== 'function') throw __typeError('ERR_INVALID_ARG_TYPE', `The "listener" argument must be of type function. Received ${__describe(listener)}`);
  if (!target._events) EventEmitter.init.call(target);
  if (target._events.newListener !== undefined) target.emit('newListener', type, listener.listener ?? listener);
  const list = target._events[type] || (target._eventsCount++, []);
  if (prepend) list.unshift(listener); else list.push(listener);
  target._events[type] = list;
  return target;
}
EventEmitter.prototype.on = EventEmitter.prototype.addListener = function (type, l) { return add(this, type, l, false); };
EventEmitter.prototype.prependListener = function (type, l) { return add(this, type, l, true); };
function onceWrap(target, type, listener) {
  const w = function (...args) { target.removeListener(type, w); return listener.apply(target, args); };
  w.listener = listener;
  return w;
}
EventEmitter.prototype.once = function (type, l) { return this.on(type, onceWrap(this, type, l)); };
EventEmitter.prototype.prependOnceListener = function (type, l) { return this.prependListener(type, onceWrap(this, type, l)); };
EventEmitter.prototype.off = EventEmitter.prototype.removeListener = function (type, listener) {
  const list = this._events && this._events[type];
  if (!list) return this;
  for (let i = list.length - 1; i >= 0; i--) {
    if (list[i] === listener || list[i].listener === listener) {
      list.splice(i, 1);
      if (list.length === 0) { delete this._events[type]; this._eventsCount--; }
      if (this._events.removeListener) this.emit('removeListener', type, listener);
      break;
    }
  }
  return this;
};
EventEmitter.prototype.removeAllListeners = function (type) {
  if (!this._events) return this;
  if (type === undefined) { this._events = Object.create(null); this._eventsCount = 0; } else if (this._events[type]) { delete this._events[type]; this._eventsCount--; }
  return this;
};
EventEmitter.prototype.emit = function (type, ...args) {
  const list = this._events && this._events[type];
  if (type === 'error' && (!list || list.length === 0)) {
    const er = args[0];
    if (er instanceof Error) throw er;
    const err = new Error(`Unhandled error. (${__inspect(er)})`);
    err.code = 'ERR_UNHANDLED_ERROR';
    err.context = er;
    throw err;
  }
  if (!list) return false;
  for (const l of [...list]) l.apply(this, args);
  return true;
};
EventEmitter.prototype.listeners = function (type) { return ((this._events && this._events[type]) || []).map((l) => l.listener ?? l); };
EventEmitter.prototype.rawListeners = function (type) { return [...((this._events && this._events[type]) || [])]; };
EventEmitter.prototype.listenerCount = function (type) { return ((this._events && this._events[type]) || []).length; };
EventEmitter.prototype.eventNames = function () { return this._events ? Reflect.ownKeys(this._events) : []; };
EventEmitter.once = function (emitter, name) {
  return new Promise((resolve, reject) => {
    const onError = (err) => { emitter.removeListener(name, onEvent); reject(err); };
    const onEvent = (...args) => { if (name !== 'error') emitter.removeListener('error', onError); resolve(args); };
    emitter.once(name, onEvent);
    if (name !== 'error') emitter.once('error', onError);
  });
};
EventEmitter.listenerCount = (em, type) => em.listenerCount(type);
EventEmitter.EventEmitter = EventEmitter;
module.exports = EventEmitter;
