// thread_ring (Benchmarks Game): 503 async functions in a ring, a token passed 5,000,000 times.
// Chan (chan.js) is the unbuffered channel over promises the Node peers share. The fibers left
// blocked at the end hold only unresolved promises, so Node exits when main is done.
"use strict";
const FIBERS = 503;
const N = 5000000;

const { Chan } = require("./chan.js");

async function worker(id, inbox, next, result) {
  for (;;) {
    const token = await inbox.recv();
    if (token === 0) { await result.send(id); return; }
    await next.send(token - 1);
  }
}

async function main() {
  const result = new Chan();
  const first = new Chan();
  let inbox = first;
  for (let id = 1; id <= FIBERS; id++) {
    const next = id < FIBERS ? new Chan() : first;
    worker(id, inbox, next, result);
    inbox = next;
  }
  await first.send(N);
  console.log(await result.recv());
}

main();
