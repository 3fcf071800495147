// mutex_counter: 1000 async functions × 1000 increments of a shared counter under a
// FIFO mutex over promises, with `await null` (a yield to the other ready fibers)
// inside the critical section.
"use strict";
const FIBERS = 1000;
const INCREMENTS = 1000;

class Mutex {
  constructor() { this.locked = false; this.waiters = []; }
  lock() {
    if (!this.locked) { this.locked = true; return Promise.resolve(); }
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  unlock() { // hand the lock straight to the first waiter (FIFO)
    if (this.waiters.length > 0) this.waiters.shift()();
    else this.locked = false;
  }
}

let counter = 0;

async function worker(m) {
  for (let i = 0; i < INCREMENTS; i++) {
    await m.lock();
    try {
      const v = counter;
      await null;
      counter = v + 1;
    } finally {
      m.unlock();
    }
  }
}

async function main() {
  const m = new Mutex();
  const tasks = [];
  for (let i = 0; i < FIBERS; i++) tasks.push(worker(m));
  await Promise.all(tasks);
  console.log(counter);
}

main();
