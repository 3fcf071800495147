// skynet: a 10-ary tree of async functions, 1,000,000 leaves; sums flow up unbuffered channels.
// Chan (chan.js) is the unbuffered channel over promises the Node peers share.
"use strict";
const SIZE = 1000000;
const DIV = 10;

const { Chan } = require("./chan.js");

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
