// Node's worker_threads beside chan_roundtrip.csp and roundtrip.csp: N round
// trips of a small message between the main thread and a worker
// (postMessage both ways), N values streamed one way (the worker counts
// them), a 1,000-item list of maps there and back, and a worker's start
// (new Worker until its first message). Prints microseconds.
// Usage: node messages.js [N]
const { Worker, isMainThread, parentPort } = require('worker_threads');

if (!isMainThread) {
    let count = 0;
    parentPort.on('message', (m) => {
        if (m.kind === 'echo') parentPort.postMessage(m);
        else if (m.kind === 'value') count += 1;
        else if (m.kind === 'end') { parentPort.postMessage({ kind: 'count', n: count }); count = 0; }
        else if (m.kind === 'rows') parentPort.postMessage(m);
    });
    parentPort.postMessage({ kind: 'ready' });
} else {
    const n = parseInt(process.argv[2] || '20000');
    const now = () => Number(process.hrtime.bigint()) / 1000; // us
    const next = (w) => new Promise((resolve) => w.once('message', resolve));
    (async () => {
        let t = now();
        const w = new Worker(__filename);
        await next(w);
        const start = now() - t;
        t = now();
        for (let i = 0; i < n; i++) {
            w.postMessage({ kind: 'echo', v: i });
            await next(w);
        }
        const rt = (now() - t) / n;
        t = now();
        for (let i = 0; i < n; i++) w.postMessage({ kind: 'value', v: i });
        w.postMessage({ kind: 'end' });
        await next(w);
        const stream = (now() - t) / n;
        const rows = [];
        for (let i = 0; i < 1000; i++) rows.push({ id: i, name: `row ${i}`, tags: ['a', 'b'] });
        const m = Math.max(1, n / 100);
        t = now();
        for (let i = 0; i < m; i++) {
            w.postMessage({ kind: 'rows', rows });
            await next(w);
        }
        const maps = (now() - t) / m;
        const f = (x) => x.toFixed(2);
        console.log(`round trip ${f(rt)} us, streamed ${f(stream)} us/value, 1,000 maps there and back ${f(maps)} us, worker start ${f(start / 1000)} ms`);
        await w.terminate();
    })();
}
