// switch: two async functions alternate with `await null` (a trip through the microtask
// queue, which runs the other one), 500,000 each.
"use strict";
const PER_FIBER = 500000;
let switches = 0;

async function bouncer() {
  for (let i = 0; i < PER_FIBER; i++) {
    switches++;
    await null;
  }
}

async function main() {
  await Promise.all([bouncer(), bouncer()]);
  console.log(switches);
}

main();
