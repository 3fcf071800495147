// prime_sieve: Go's classic concurrent prime sieve with async functions; prints the 2000th prime.
// Chan is a minimal unbuffered (rendezvous) channel over promises.
"use strict";
const COUNT = 2000;

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

async function generate(out) {
  for (let i = 2; ; i++) await out.send(i);
}

async function filter(inp, out, prime) {
  for (;;) {
    const i = await inp.recv();
    if (i % prime !== 0) await out.send(i);
  }
}

async function main() {
  let ch = new Chan();
  generate(ch);
  let prime = 0;
  for (let i = 0; i < COUNT; i++) {
    prime = await ch.recv();
    const next = new Chan();
    filter(ch, next, prime);
    ch = next;
  }
  console.log(prime);
}

main();
