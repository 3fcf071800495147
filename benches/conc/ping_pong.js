// ping_pong: 500,000 round trips over two unbuffered channels between two async functions.
// Chan is a minimal unbuffered (rendezvous) channel over promises.
"use strict";
const N = 500000;

class Chan {
  constructor() { this.senders = []; this.receivers = []; this.closed = false; }
  send(v) {
    if (this.receivers.length > 0) { this.receivers.shift()(v); return Promise.resolve(); }
    return new Promise((resolve) => this.senders.push([v, resolve]));
  }
  recv() { // undefined once closed and drained
    if (this.senders.length > 0) { const [v, resolve] = this.senders.shift(); resolve(); return Promise.resolve(v); }
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => this.receivers.push(resolve));
  }
  close() { this.closed = true; while (this.receivers.length > 0) this.receivers.shift()(undefined); }
}

async function ponger(ping, pong) {
  for (;;) {
    const v = await ping.recv();
    if (v === undefined) return;
    await pong.send(v + 1);
  }
}

async function main() {
  const ping = new Chan(), pong = new Chan();
  const t = ponger(ping, pong);
  let n = 0;
  for (let i = 0; i < N; i++) {
    await ping.send(n);
    n = await pong.recv();
  }
  ping.close();
  await t;
  console.log(n);
}

main();
