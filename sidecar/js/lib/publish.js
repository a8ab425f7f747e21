// sqlfs:publish: a signed, expiring public link to a workspace file or
// directory. publish(path, { ttl: seconds }) resolves to the URL.
async function publish(path, o) {
  o = o || {};
  return native.publish(require('path').resolve(String(path)), o.ttl === undefined ? 0 : Number(o.ttl));
}
module.exports = { publish, default: publish };
