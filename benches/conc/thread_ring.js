// thread_ring (Benchmarks Game): 503 async functions in a ring, a token passed 5,000,000 times.
// Chan is a minimal unbuffered (rendezvous) channel over promises. The fibers left
// blocked at the end hold only unresolved promises, so Node exits when main is done.
"use strict";
const FIBERS = 503;
const N = 5000000;

class Chan {
  constructor() { this.senders = []; this.receivers = []; }
  send(v) {
    if (this.receivers.length > 0) { this.receivers.shift()(v); return Promise.resolve(); }
    return new Promise((resolve) => this.senders.push([v, resolve]));
  }
  recv() {
    if (this.senders.length > 0) { const [v, resolve] = this.senders.shift(); resolve(); return Promise.resolve(v); }
    return new Promise((resolve) => this.receivers.push(resolve));
  }
}

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
