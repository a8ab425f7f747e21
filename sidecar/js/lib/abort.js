// The web globals Node has beside its own events: DOMException, Event,
// EventTarget, AbortController and AbortSignal (what web streams, fetch
// and many packages take as a signal).
const codes = { IndexSizeError: 1, HierarchyRequestError: 3, InvalidCharacterError: 5, NotSupportedError: 9, InvalidStateError: 11, SyntaxError: 12, InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, TimeoutError: 23, DataCloneError: 25 };
class DOMException extends Error {
  constructor(message = '', options = 'Error') {
    super(String(message));
    const name = typeof options === 'object' && options !== null ? String(options.name ?? 'Error') : String(options);
    if (typeof options === 'object' && options !== null && 'cause' in options) Object.defineProperty(this, 'cause', { value: options.cause, writable: true, configurable: true });
    Object.defineProperty(this, 'name', { value: name, writable: true, configurable: true });
  }

  get code() { return codes[this.name] || 0; }
}
Object.defineProperty(DOMException.prototype, Symbol.toStringTag, { value: 'DOMException', configurable: true });

class Event {
  constructor(type, init = {}) {
    if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
    this._type = String(type);
    this._bubbles = Boolean(init.bubbles);
    this._cancelable = Boolean(init.cancelable);
    this._defaultPrevented = false;
    this._target = null;
    this._stop = false;
    this._timeStamp = performance.now();
  }

  get type() { return this._type; }

  get target() { return this._target; }

  get currentTarget() { return this._target; }

  get srcElement() { return this._target; }

  get bubbles() { return this._bubbles; }

  get cancelable() { return this._cancelable; }

  get defaultPrevented() { return this._cancelable && this._defaultPrevented; }

  get timeStamp() { return this._timeStamp; }

  get isTrusted() { return false; }

  preventDefault() { this._defaultPrevented = true; }

  stopPropagation() {}

  stopImmediatePropagation() { this._stop = true; }

  composedPath() { return this._target ? [this._target] : []; }
}

const listenersOf = new WeakMap();
class EventTarget {
  addEventListener(type, listener, options = {}) {
    if (listener === null || listener === undefined) return;
    const opts = typeof options === 'boolean' ? { capture: options } : options;
    let map = listenersOf.get(this);
    if (!map) listenersOf.set(this, map = new Map());
    const list = map.get(type) || [];
    if (list.some((l) => l.listener === listener && l.capture === Boolean(opts.capture))) return;
    const entry = { listener, capture: Boolean(opts.capture), once: Boolean(opts.once) };
    list.push(entry);
    map.set(type, list);
    if (opts.signal) opts.signal.addEventListener('abort', () => this.removeEventListener(type, listener, opts), { once: true });
  }

  removeEventListener(type, listener, options = {}) {
    const capture = Boolean(typeof options === 'boolean' ? options : options.capture);
    const list = listenersOf.get(this)?.get(type);
    if (!list) return;
    const i = list.findIndex((l) => l.listener === listener && l.capture === capture);
    if (i >= 0) list.splice(i, 1);
  }

  dispatchEvent(event) {
    if (!(event instanceof Event)) throw __typeError('ERR_INVALID_ARG_TYPE', 'The "event" argument must be an instance of Event.');
    event._target = this;
    const handler = this[`on${event.type}`];
    const list = [...(listenersOf.get(this)?.get(event.type) || [])];
    if (typeof handler === 'function' && !list.some((l) => l.listener === handler)) list.unshift({ listener: handler });
    for (const l of list) {
      if (l.once) this.removeEventListener(event.type, l.listener, l);
      try {
        if (typeof l.listener === 'function') l.listener.call(this, event);
        else if (l.listener && typeof l.listener.handleEvent === 'function') l.listener.handleEvent(event);
      } catch (e) { process.nextTick(() => { throw e; }); }
      if (event._stop) break;
    }
    return !event.defaultPrevented;
  }
}

class AbortSignal extends EventTarget {
  constructor(key) {
    if (key !== internal) throw new TypeError('Illegal constructor');
    super();
    this._aborted = false;
    this._reason = undefined;
    this.onabort = null;
  }

  get aborted() { return this._aborted; }

  get reason() { return this._reason; }

  throwIfAborted() { if (this._aborted) throw this._reason; }

  _abort(reason) {
    if (this._aborted) return;
    this._aborted = true;
    this._reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    this.dispatchEvent(new Event('abort'));
  }

  static abort(reason) { const s = new AbortSignal(internal); s._abort(reason); return s; }

  static timeout(ms) {
    const s = new AbortSignal(internal);
    const t = setTimeout(() => s._abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
    t.unref();
    return s;
  }

  static any(signals) {
    const s = new AbortSignal(internal);
    for (const x of signals) {
      if (x.aborted) { s._abort(x.reason); return s; }
      x.addEventListener('abort', () => s._abort(x.reason), { once: true });
    }
    return s;
  }
}
Object.defineProperty(AbortSignal.prototype, Symbol.toStringTag, { value: 'AbortSignal', configurable: true });
const internal = Symbol('internal');

class AbortController {
  constructor() { this._signal = new AbortSignal(internal); }

  get signal() { return this._signal; }

  abort(reason) { this._signal._abort(reason); }
}
Object.defineProperty(AbortController.prototype, Symbol.toStringTag, { value: 'AbortController', configurable: true });

module.exports = { DOMException, Event, EventTarget, AbortController, AbortSignal };
