// skynet: a 10-ary tree of async functions, 1,000,000 leaves; sums flow up unbuffered channels.
// Chan is a minimal unbuffered (rendezvous) channel over promises.
"use strict";
const SIZE = 1000000;
const DIV = 10;

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

async function skynet(out, num, size) {
  if (size === 1) { await out.send(num); return; }
  const rc = new Chan();
  const sub = size / DIV;
  for (let i = 0; i < DIV; i++) skynet(rc, num + i * sub, sub);
  let sum = 0;
  for (let i = 0; i < DIV; i++) sum += await rc.recv();
  await out.send(sum);
}

async function main() {
  const c = new Chan();
  skynet(c, 0, SIZE);
  console.log(await c.recv());
}

main();
