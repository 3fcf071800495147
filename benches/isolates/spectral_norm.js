// Spectral-norm beside spectral_norm.csp with Node's worker_threads: the
// same algorithm and N, run on the main thread, then with every
// matrix-vector product split over the same row chunks (one per worker) on
// a pool of 2 workers started (and sent a first job) before the timing; v
// goes with postMessage (copied), each part comes back transferred.
// Usage: node spectral_norm.js [N]
const { Worker, isMainThread, parentPort } = require('worker_threads');

function a(i, j) {
    const ij = i + j;
    return 1.0 / (ij * (ij + 1) / 2 + i + 1);
}

// Rows from..to (excluded) of A v.
function av(v, from, to) {
    const n = v.length, out = new Float64Array(to - from);
    for (let i = from; i < to; i++) {
        let s = 0.0;
        for (let j = 0; j < n; j++) s += a(i, j) * v[j];
        out[i - from] = s;
    }
    return out;
}

// Rows from..to (excluded) of At v.
function atv(v, from, to) {
    const n = v.length, out = new Float64Array(to - from);
    for (let i = from; i < to; i++) {
        let s = 0.0;
        for (let j = 0; j < n; j++) s += a(j, i) * v[j];
        out[i - from] = s;
    }
    return out;
}

const fns = { av, atv };

if (!isMainThread) {
    parentPort.on('message', ({ id, f, v, from, to }) => {
        const result = fns[f](v, from, to);
        parentPort.postMessage({ id, result }, [result.buffer]);
    });
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

    // f over all the rows: here when parallel is false, else one job per
    // worker, the parts joined in order.
    async function product(f, v, parallel) {
        const n = v.length;
        if (!parallel) return fns[f](v, 0, n);
        const jobs = [];
        for (let i = 0; i < workers; i++) {
            jobs.push(call(i, { f, v, from: Math.floor(n * i / workers), to: Math.floor(n * (i + 1) / workers) }));
        }
        const out = new Float64Array(n);
        let at = 0;
        for (const part of await Promise.all(jobs)) { out.set(part, at); at += part.length; }
        return out;
    }

    async function norm(n, parallel) {
        let u = new Float64Array(n).fill(1.0), v;
        for (let k = 0; k < 10; k++) {
            v = await product('atv', await product('av', u, parallel), parallel);
            u = await product('atv', await product('av', v, parallel), parallel);
        }
        let vbv = 0.0, vv = 0.0;
        for (let i = 0; i < n; i++) { vbv += u[i] * v[i]; vv += v[i] * v[i]; }
        return Math.sqrt(vbv / vv);
    }

    (async () => {
        const n = parseInt(process.argv[2] || '800');
        await norm(2, true); // the workers start here, not in the timing
        const t0 = performance.now();
        const serial = await norm(n, false);
        const t1 = performance.now();
        const parallel = await norm(n, true);
        const t2 = performance.now();
        for (const w of pool) await w.terminate();
        if (serial !== parallel) {
            console.log(`norms differ: ${serial} ${parallel}`);
            process.exit(1);
        }
        console.log(`spectral-norm ${n}: ${serial.toFixed(9)}, serial ${Math.trunc(t1 - t0)} ms, parallel ${Math.trunc(t2 - t1)} ms, ratio ${((t2 - t1) / (t1 - t0)).toFixed(3)}`);
    })();
}
