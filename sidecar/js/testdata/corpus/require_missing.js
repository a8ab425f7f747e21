try { require('./nothere') } catch (e) { console.log(e.code || 'no code', /Cannot find module/.test(e.message)) }
