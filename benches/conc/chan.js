// The rendezvous channel the Node peers share: an unbuffered channel over promises.
"use strict";

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

module.exports = { Chan };
