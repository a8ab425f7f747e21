const { produce, enableMapSet } = require('immer');
enableMapSet();
const base = { todos: [{ id: 1, done: false }], m: new Map([['a', 1]]) };
const next = produce(base, d => { d.todos[0].done = true; d.todos.push({ id: 2, done: false }); d.m.set('b', 2); });
console.log(base.todos[0].done, next.todos, next.m, Object.isFrozen(next), next.todos[1] !== base.todos[1]);
