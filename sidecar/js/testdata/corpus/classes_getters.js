class A { #p = 1; static s = 2; get v() { return this.#p } } const a = new A(); console.log(a.v, A.s, Object.keys(a), a)
