// sqlfs:git needs the git package of the shell's git built-in, which this
// build does not include.
const e = new Error("Cannot load 'sqlfs:git': the git helper is not available in this build of sqlfs");
e.code = 'ERR_SQLFS_UNAVAILABLE';
throw e;
