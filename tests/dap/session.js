// Drives `csp dap` as VS Code does, through @vscode/debugadapter-testsupport's
// DebugClient: breakpoints in two fibers, stepping in, over and out (and over
// a blocking send), variables (a list, a map, a big list paged), evaluate, an
// uncaught error and the program's end.
// Usage: node tests/dap/session.js PATH-TO-CSP  (tests/dap.rs runs it)
'use strict';
const assert = require('assert');
const path = require('path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const csp = process.argv[2];
const program = path.join(__dirname, 'program.csp');
const PRODUCER_SEND = 11;
const CONSUMER_ADD = 19;
const THROW = 36;

// DAP_VERBOSE=1 shows each stop as it comes.
const verbose = !!process.env.DAP_VERBOSE;

async function stopped(dc, reason) {
  const ev = await dc.waitForEvent('stopped');
  if (verbose) console.error(`stopped: ${JSON.stringify(ev.body)}`);
  assert.strictEqual(ev.body.reason, reason, `stopped for ${ev.body.reason}, expected ${reason}`);
  const st = await dc.stackTraceRequest({ threadId: ev.body.threadId });
  return { thread: ev.body.threadId, event: ev, frames: st.body.stackFrames };
}

// Waits for the stop a request causes (listening before it is sent: the
// event may come in the same read as the response).
async function resumed(dc, request, reason) {
  const stop = stopped(dc, reason);
  await request;
  return stop;
}

async function locals(dc, frameId) {
  const scopes = await dc.scopesRequest({ frameId });
  const names = scopes.body.scopes.map(s => s.name);
  assert.ok(names.includes('Locals') && names.includes('Globals'), `scopes: ${names}`);
  const ref = scopes.body.scopes.find(s => s.name === 'Locals').variablesReference;
  const vars = await dc.variablesRequest({ variablesReference: ref });
  return Object.fromEntries(vars.body.variables.map(v => [v.name, v]));
}

async function setBreakpoints(dc, lines) {
  const r = await dc.setBreakpointsRequest({ source: { path: program }, breakpoints: lines.map(line => ({ line })) });
  assert.deepStrictEqual(r.body.breakpoints.map(b => [b.verified, b.line]), lines.map(l => [true, l]));
}

async function session(dc) {
  const configured = dc.waitForEvent('initialized').then(async () => {
    await setBreakpoints(dc, [PRODUCER_SEND, CONSUMER_ADD]);
    await dc.setExceptionBreakpointsRequest({ filters: ['uncaught'] });
    await dc.configurationDoneRequest();
  });
  const first = stopped(dc, 'breakpoint');
  const stdout = dc.assertOutput('stdout', 'total 5\n', 60000);
  await Promise.all([configured, dc.launch({ program }), first]);

  // The producer fiber at its breakpoint; every fiber is a thread.
  let at = await first;
  const producer = at.thread;
  assert.strictEqual(at.frames[0].name, 'producer');
  assert.strictEqual(at.frames[0].line, PRODUCER_SEND);
  const threads = (await dc.threadsRequest()).body.threads;
  assert.ok(threads.length >= 3, `threads: ${JSON.stringify(threads)}`);
  assert.ok(threads.some(t => t.name.startsWith('main fiber') && t.name.includes('blocked')), JSON.stringify(threads));
  assert.ok(threads.some(t => t.id === producer && t.name.includes('go at')), JSON.stringify(threads));
  let vars = await locals(dc, at.frames[0].id);
  assert.strictEqual(vars.i.value, '0');
  assert.strictEqual(vars.n.value, '3');

  // Into square, over its first line, out again.
  at = await resumed(dc, dc.stepInRequest({ threadId: producer }), 'step');
  assert.deepStrictEqual(at.frames.map(f => f.name), ['square', 'producer']);
  assert.strictEqual(at.frames[0].line, 5);
  at = await resumed(dc, dc.nextRequest({ threadId: producer }), 'step');
  assert.strictEqual(at.frames[0].line, 6);
  const y = await dc.evaluateRequest({ expression: 'y + x + 1', frameId: at.frames[0].id });
  assert.strictEqual(y.body.result, '1');
  at = await resumed(dc, dc.stepOutRequest({ threadId: producer }), 'step');
  assert.strictEqual(at.frames[0].name, 'producer');
  assert.strictEqual(at.frames.length, 1);

  // Over the send: the consumer fiber takes the value and stops at its own breakpoint.
  at = await resumed(dc, dc.nextRequest({ threadId: producer }), 'breakpoint');
  assert.notStrictEqual(at.thread, producer);
  assert.strictEqual(at.frames[0].name, 'consumer');
  assert.strictEqual(at.frames[0].line, CONSUMER_ADD);
  vars = await locals(dc, at.frames[0].id);
  assert.strictEqual(vars.v.value, '0');
  assert.strictEqual(vars.total.value, '0');

  // The producer again; with no breakpoints, a step over the blocking send
  // ends in the producer once the consumer has taken the value.
  at = await resumed(dc, dc.continueRequest({ threadId: at.thread }), 'breakpoint');
  assert.strictEqual(at.thread, producer);
  assert.strictEqual((await locals(dc, at.frames[0].id)).i.value, '1');
  await setBreakpoints(dc, []);
  at = await resumed(dc, dc.nextRequest({ threadId: producer }), 'step');
  assert.strictEqual(at.thread, producer);
  assert.strictEqual(at.frames[0].line, 10);

  // The uncaught error at the end, in the main fiber: its variables.
  at = await resumed(dc, dc.continueRequest({ threadId: producer }), 'exception');
  assert.match(at.event.body.text, /boom: 150/);
  assert.strictEqual(at.frames[0].line, THROW);
  await stdout;
  vars = await locals(dc, at.frames[0].id);
  assert.strictEqual(vars.names.indexedVariables, 3);
  assert.strictEqual(vars.config.namedVariables, 2);
  assert.strictEqual(vars.big.indexedVariables, 150);
  const page = await dc.variablesRequest({ variablesReference: vars.big.variablesReference, filter: 'indexed', start: 100, count: 10 });
  const named = await dc.variablesRequest({ variablesReference: vars.big.variablesReference, filter: 'named' });
  assert.deepStrictEqual(named.body.variables, [], 'a list has no named children');
  assert.deepStrictEqual(page.body.variables.map(v => v.value), ['100', '101', '102', '103', '104', '105', '106', '107', '108', '109']);
  const config = await dc.variablesRequest({ variablesReference: vars.config.variablesReference });
  assert.deepStrictEqual(config.body.variables.map(v => `${v.name}=${v.value}`), ['depth=2', 'tags=["a", "b", "c"]']);
  const sum = await dc.evaluateRequest({ expression: 'len(big) + total', frameId: at.frames[0].id });
  assert.strictEqual(sum.body.result, '155');
  await assert.rejects(dc.evaluateRequest({ expression: 'nosuch + 1', frameId: at.frames[0].id }), /nosuch/);

  // The end: exit code 1 (the error), then terminated.
  const exited = dc.waitForEvent('exited');
  const terminated = dc.waitForEvent('terminated');
  const stderr = dc.assertOutput('stderr', '', 5000);
  await dc.continueRequest({ threadId: at.thread });
  assert.strictEqual((await exited).body.exitCode, 1);
  await terminated;
  await stderr;
}

async function main() {
  const dc = new DebugClient(csp, 'dap', 'csp', {}, true);
  dc.defaultTimeout = 20000;
  await dc.start();
  try {
    await session(dc);
    console.log('dap session: ok');
  } finally {
    // Sends disconnect, then ends the adapter.
    await dc.stop();
  }
}

main().catch(e => {
  console.error(`dap session failed: ${e.stack || e}`);
  process.exit(1);
});
