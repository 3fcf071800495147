// Mandelbrot beside mandelbrot.csp with Node's worker_threads: the same grid
// and iterations, counted on the main thread, then over the same row chunks
// (2 per worker) on a pool of 2 workers started (and sent a first job)
// before the timing; each chunk goes with postMessage and its count comes
// back the same way. Usage: node mandelbrot.js [N]
const { Worker, isMainThread, parentPort } = require('worker_threads');

// The points of rows from..to (excluded) that stay bounded.
function rows(n, from, to) {
    let count = 0;
    for (let y = from; y < to; y++) {
        const ci = 2.0 * y / n - 1.0;
        for (let x = 0; x < n; x++) {
            const cr = 2.0 * x / n - 1.5;
            let zr = 0.0, zi = 0.0, inside = 1;
            for (let k = 0; k < 50; k++) {
                const zr2 = zr * zr, zi2 = zi * zi;
                if (zr2 + zi2 > 4.0) { inside = 0; break; }
                zi = 2.0 * zr * zi + ci;
                zr = zr2 - zi2 + cr;
            }
            count += inside;
        }
    }
    return count;
}

if (!isMainThread) {
    parentPort.on('message', ({ id, n, from, to }) => parentPort.postMessage({ id, result: rows(n, from, to) }));
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
    // Job i goes to worker i % workers; each worker runs its jobs in order.
    const call = (i, job) => new Promise((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        pool[i % workers].postMessage({ id, ...job });
    });
    (async () => {
        const n = parseInt(process.argv[2] || '1200');
        const parts = 2 * workers;
        await Promise.all(pool.map((_, i) => call(i, { n: 2, from: 0, to: 1 }))); // the workers start here
        const t0 = performance.now();
        const serial = rows(n, 0, n);
        const t1 = performance.now();
        const jobs = [];
        for (let i = 0; i < parts; i++) {
            jobs.push(call(i, { n, from: Math.floor(n * i / parts), to: Math.floor(n * (i + 1) / parts) }));
        }
        const parallel = (await Promise.all(jobs)).reduce((a, b) => a + b, 0);
        const t2 = performance.now();
        for (const w of pool) await w.terminate();
        if (serial !== parallel) {
            console.log(`counts differ: ${serial} ${parallel}`);
            process.exit(1);
        }
        console.log(`mandelbrot ${n}: ${serial} points, serial ${Math.trunc(t1 - t0)} ms, parallel ${Math.trunc(t2 - t1)} ms, ratio ${((t2 - t1) / (t1 - t0)).toFixed(3)}`);
    })();
}
