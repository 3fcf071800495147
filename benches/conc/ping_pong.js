// ping_pong: 500,000 round trips over two unbuffered channels between two async functions.
// Chan (chan.js) is the unbuffered channel over promises the Node peers share.
"use strict";
const N = 500000;

const { Chan } = require("./chan.js");

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
