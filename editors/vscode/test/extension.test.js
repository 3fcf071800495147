'use strict';
// Loads extension.js with stand-ins for the `vscode` module and the language
// client, and checks that activation starts `csp lsp` (the binary from
// `csp.path`) over stdio for csp documents, that debug sessions run `csp dap`,
// and that deactivation stops the server.
// Run: `node test/extension.test.js` in editors/vscode.

const assert = require('assert');
const Module = require('module');
const path = require('path');

const settings = { path: '/opt/csp/bin/csp', 'server.enable': true };
const created = [];
const registered = {};

class FakeClient {
  constructor(id, name, serverOptions, clientOptions) {
    Object.assign(this, { id, name, serverOptions, clientOptions, started: false, stopped: false });
    created.push(this);
  }
  async start() {
    this.started = true;
  }
  async stop() {
    this.stopped = true;
  }
}

const fakeVscode = {
  workspace: {
    getConfiguration: (section) => {
      assert.strictEqual(section, 'csp');
      return { get: (key, dflt) => (key in settings ? settings[key] : dflt) };
    },
    workspaceFolders: [{ uri: { fsPath: '/work/project' } }],
    onDidChangeConfiguration: (f) => {
      registered.onConfig = f;
      return { dispose() {} };
    },
  },
  window: { showErrorMessage: async () => undefined },
  debug: {
    registerDebugAdapterDescriptorFactory: (type, factory) => {
      registered.debugAdapters = { type, factory };
      return { dispose() {} };
    },
  },
  DebugAdapterExecutable: class {
    constructor(command, args) {
      Object.assign(this, { command, args });
    }
  },
  commands: {
    registerCommand: (name, f) => {
      registered[name] = f;
      return { dispose() {} };
    },
    executeCommand: async () => undefined,
  },
};

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'vscode' || request === 'vscode-languageclient/node') return request;
  return resolve.call(this, request, ...rest);
};
require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: fakeVscode };
require.cache['vscode-languageclient/node'] = {
  id: 'vscode-languageclient/node',
  filename: 'vscode-languageclient/node',
  loaded: true,
  exports: { LanguageClient: FakeClient },
};

const extension = require(path.join(__dirname, '..', 'extension.js'));

async function main() {
  const context = { subscriptions: [] };
  await extension.activate(context);
  assert.strictEqual(created.length, 1, 'one language client');
  const c = created[0];
  assert.ok(c.started, 'the client was started');
  assert.deepStrictEqual(c.serverOptions.run.command, '/opt/csp/bin/csp');
  assert.deepStrictEqual(c.serverOptions.run.args, ['lsp']);
  assert.strictEqual(c.serverOptions.run.transport, undefined, 'plain stdio, no --stdio flag');
  assert.strictEqual(c.serverOptions.run.options.cwd, '/work/project');
  assert.ok(c.clientOptions.documentSelector.some((d) => d.language === 'csp' && d.scheme === 'file'));
  assert.ok(registered['csp.restartServer'], 'restart command registered');
  assert.strictEqual(context.subscriptions.length, 3);

  // Debug sessions of type csp run `csp dap`, declared in package.json.
  assert.strictEqual(registered.debugAdapters.type, 'csp');
  const adapter = registered.debugAdapters.factory.createDebugAdapterDescriptor({});
  assert.deepStrictEqual([adapter.command, adapter.args], ['/opt/csp/bin/csp', ['dap']]);
  const manifest = require(path.join(__dirname, '..', 'package.json'));
  const debuggerEntry = manifest.contributes.debuggers.find((d) => d.type === 'csp');
  assert.deepStrictEqual(debuggerEntry.configurationAttributes.launch.required, ['program']);
  assert.deepStrictEqual(Object.keys(debuggerEntry.configurationAttributes.launch.properties), ['program', 'args', 'cwd', 'stopOnEntry']);
  assert.ok(manifest.contributes.breakpoints.some((b) => b.language === 'csp'), 'breakpoints in csp files');

  // Changing csp.path restarts the server with the new binary.
  settings.path = '  ';
  await registered.onConfig({ affectsConfiguration: (k) => k === 'csp.path' });
  assert.ok(c.stopped, 'the old client was stopped');
  assert.strictEqual(created.length, 2);
  assert.strictEqual(created[1].serverOptions.run.command, 'csp', 'a blank csp.path means `csp` on PATH');

  // Disabled: no client.
  settings['server.enable'] = false;
  await registered['csp.restartServer']();
  assert.strictEqual(created.length, 2);

  settings['server.enable'] = true;
  await registered['csp.restartServer']();
  assert.strictEqual(created.length, 3);
  await extension.deactivate();
  assert.ok(created[2].stopped, 'deactivate stops the client');
  console.log('ok: extension starts and stops `csp lsp` and debugs with `csp dap`');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
