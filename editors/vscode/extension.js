'use strict';
// The csp extension: the grammar, language configuration and debug
// configuration are declared in package.json; this file starts the language
// server, `csp lsp`, which talks LSP over stdin/stdout, and tells VS Code to
// debug with `csp dap` (the Debug Adapter Protocol over stdin/stdout).
// `csp.path` names the binary.

const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function serverCommand() {
  const path = vscode.workspace.getConfiguration('csp').get('path');
  return typeof path === 'string' && path.trim() !== '' ? path.trim() : 'csp';
}

async function startServer() {
  if (!vscode.workspace.getConfiguration('csp').get('server.enable', true)) return;
  const command = serverCommand();
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  // No `transport` field: with TransportKind.stdio the client would append
  // `--stdio` to the arguments, which `csp lsp` does not take.
  const executable = {
    command,
    args: ['lsp'],
    options: folder ? { cwd: folder.uri.fsPath } : undefined,
  };
  const serverOptions = { run: executable, debug: executable };
  const clientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'csp' },
      { scheme: 'untitled', language: 'csp' },
    ],
    outputChannelName: 'csp',
  };
  client = new LanguageClient('csp', 'csp language server', serverOptions, clientOptions);
  try {
    await client.start();
  } catch (e) {
    client = undefined;
    const choice = await vscode.window.showErrorMessage(
      `csp: could not start the language server (\`${command} lsp\`): ${e && e.message ? e.message : e}. ` +
        'Set "csp.path" to the csp binary.',
      'Open Settings',
    );
    if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'csp.path');
  }
}

async function stopServer() {
  const c = client;
  client = undefined;
  if (c) await c.stop();
}

// Each debug session runs `csp dap`; the launch configuration (program,
// args, cwd, stopOnEntry) goes to it in the `launch` request.
const debugAdapters = {
  createDebugAdapterDescriptor() {
    return new vscode.DebugAdapterExecutable(serverCommand(), ['dap']);
  },
};

async function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('csp', debugAdapters),
    vscode.commands.registerCommand('csp.restartServer', async () => {
      await stopServer();
      await startServer();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration('csp.path') || event.affectsConfiguration('csp.server.enable')) {
        await stopServer();
        await startServer();
      }
    }),
  );
  await startServer();
}

function deactivate() {
  return stopServer();
}

module.exports = { activate, deactivate };
