const os = require('os'); console.log(os.EOL === '\n', os.platform(), os.type(), typeof os.tmpdir(), typeof os.homedir(), Array.isArray(os.cpus()))
