const u = new URL('https://user:pw@example.com:8080/a/b?x=1&y=two#frag'); console.log(u.hostname, u.port, u.pathname, u.search, u.hash, u.searchParams.get('y'), u.protocol); console.log(u.href)
