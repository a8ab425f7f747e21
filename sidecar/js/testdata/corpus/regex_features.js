console.log('2024-01-15'.match(/(?<y>\d+)-(?<m>\d+)/).groups.y, 'aXbX'.split(/x/i), [...'a1b2'.matchAll(/\d/g)].map((m) => m[0]))
