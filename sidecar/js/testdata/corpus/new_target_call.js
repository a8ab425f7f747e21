// new.target in a plain call is undefined, also when the caller is a
// constructor: goja left the caller's new.target in place, so argparse's
// callable classes (js-yaml's CLI) built an _ArgumentGroup as an ArgumentParser.
const name = (t) => (t === undefined ? 'undefined' : t.name);
function f() { return name(new.target); }
function g(...args) { return name(new.target) + args.length; }
const m = { m() { return name(new.target); } };
const arrow = function () { return () => name(new.target); }();
class P { constructor() { this.r = [f(), g(), g(1, 2), m.m(), arrow(), f.call(null), g.apply(null, [1])]; } }
class Q extends P { constructor() { super(); this.s = [f(), name(new.target), (() => name(new.target))()]; } }
function R() { this.r = [f(), new.target === R, (function () { return name(new.target); })()]; }
console.log(new P().r, new Q().s, new Q().r, new R().r, Reflect.construct(function () { return { v: f() }; }, []).v);
function _callable(cls) {
  const result = { [cls.name]: function (...args) {
    return Reflect.construct(cls, args, new.target === result || !new.target ? cls : new.target);
  } };
  result[cls.name].prototype = cls.prototype;
  return result[cls.name];
}
const Group = _callable(class Group { kind() { return 'group'; } });
const Parser = _callable(class Parser { constructor() { this.g = Group(); } kind() { return 'parser'; } });
const p = new Parser();
console.log(p.kind(), p.g.kind(), p.g instanceof Group, Parser().g.kind());
