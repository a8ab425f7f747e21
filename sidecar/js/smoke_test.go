package js

import (
	"testing"

	"github.com/sqlfs/sqlfs/sidecar"
)

func TestSmoke(t *testing.T) {
	b, _, _ := newTestBackend(t, Options{})
	for _, code := range []string{
		`console.log(1)`,
		`console.log({a:1,b:'x',c:[1,2,3]}, [1,2,3,4,5,6,7,8,9,10], new Map([[1,2]]), null, undefined)`,
		`const fs=require('fs'); fs.writeFileSync('a.txt','hi'); console.log(fs.readFileSync('a.txt','utf8'), fs.statSync('a.txt').size)`,
		`const fs=require('node:fs/promises'); (async()=>{ await fs.mkdir('d/e',{recursive:true}); await fs.writeFile('d/e/f.json', JSON.stringify({x:1})); console.log(await fs.readdir('d',{recursive:true}), JSON.parse(await fs.readFile('d/e/f.json','utf8'))) })()`,
		`setTimeout(()=>console.log('later'), 5); Promise.resolve().then(()=>console.log('micro')); console.log('now')`,
		`import fs from 'node:fs'; const x: number = 3; console.log(x, typeof fs.readFileSync)`,
		`const fs = await import('node:fs'); console.log('tla')`,
		`require('fs').readFileSync('nope')`,
		`throw new Error('boom')`,
		`Promise.reject(new Error('rej'))`,
		`process.exitCode = 3`,
		`process.on('exit', c => console.log('exit', c)); process.exit(4)`,
		`console.log(require('child_process').execSync('echo hi; ls', {encoding:'utf8'}))`,
		`console.log(require('path').join('a','..','b/c'), require('util').format('%s=%d', 'x', 5))`,
		`console.log(new TextDecoder().decode(new TextEncoder().encode('héllo')), Buffer.from('hi').toString('base64'), new URL('http://x/a?b=1').searchParams.get('b'))`,
		`fetch('http://example.com').catch(e => console.log(e.message, e.cause.message))`,
	} {
		out := run(t, b, sidecar.Request{Command: code})
		t.Logf("%s\n=> %d\nstdout: %s\nstderr: %s", code, out.ExitCode, out.stdout, out.stderr)
	}
}
