console.log(Buffer.from('sqlfs rocks').toString('base64'), Buffer.from('c3FsZnM=', 'base64').toString(), Buffer.alloc(3, 'ab').toString(), Buffer.from([0x41, 0x42]).readUInt16BE(0))
