const e = new TextEncoder().encode('€uro'); console.log(e.length, e[0], new TextDecoder().decode(e), new TextDecoder('utf-8').encoding)
