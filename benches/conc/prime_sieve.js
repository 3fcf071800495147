// prime_sieve: Go's classic concurrent prime sieve with async functions; prints the 2000th prime.
// Chan (chan.js) is the unbuffered channel over promises the Node peers share.
"use strict";
const COUNT = 2000;

const { Chan } = require("./chan.js");

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
