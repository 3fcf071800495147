// map_items.csp's pure function mapped over 10,000 items with Node's
// worker_threads: on the main thread, then on a pool of 2 workers started
// (and sent a first job) before the timing, each sent half of the items
// with postMessage and sending back its results the same way.
// Usage: node map_items.js [ITEMS]
const { Worker, isMainThread, parentPort } = require('worker_threads');

function f(x) {
    let s = x;
    for (let i = 0; i < 2000; i++) s = (s * 31 + i) % 1000003;
    return s;
}

if (!isMainThread) {
    parentPort.on('message', ({ id, xs }) => parentPort.postMessage({ id, result: xs.map(f) }));
} else {
    const workers = 2;
    const pool = [];
    const pending = new Map();
    let nextId = 0;
    for (let i = 0; i < workers; i++) {
        const w = new Worker(__filename);
        w.on('message', ({ id, result }) => { pending.get(id)(result); pending.delete(id); });
        pool.push(w);
    }
    const call = (i, xs) => new Promise((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        pool[i].postMessage({ id, xs });
    });
    (async () => {
        const n = parseInt(process.argv[2] || '10000');
        const xs = Array.from({ length: n }, (_, i) => i);
        await Promise.all(pool.map((_, i) => call(i, [i]))); // the workers start here
        const t0 = performance.now();
        const serial = xs.map(f);
        const t1 = performance.now();
        const halves = [];
        for (let i = 0; i < workers; i++) {
            halves.push(call(i, xs.slice(Math.floor(n * i / workers), Math.floor(n * (i + 1) / workers))));
        }
        const parallel = (await Promise.all(halves)).flat();
        const t2 = performance.now();
        for (const w of pool) await w.terminate();
        let sum = 0;
        for (let i = 0; i < n; i++) {
            if (serial[i] !== parallel[i]) {
                console.log(`results differ at ${i}`);
                process.exit(1);
            }
            sum += serial[i];
        }
        console.log(`map ${n} items: sum ${sum}, serial ${Math.trunc(t1 - t0)} ms, parallel ${Math.trunc(t2 - t1)} ms, ratio ${((t2 - t1) / (t1 - t0)).toFixed(3)}`);
    })();
}
