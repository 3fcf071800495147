'use strict';
// Tests the TextMate grammar with the tokenizer VS Code itself uses
// (vscode-textmate on vscode-oniguruma):
// - every .csp file under examples/ and std/ tokenizes with no invalid token
//   and no begin/end scope (string, comment, interpolation) left open at the
//   end of the file;
// - snippets get the scopes a theme needs (keywords, strings, interpolation,
//   comments, numbers, function names, ...).
// Run: `npm ci && node test/grammar.test.js` in editors/vscode.

const fs = require('fs');
const path = require('path');
const assert = require('assert');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const root = path.resolve(__dirname, '..', '..', '..');
const grammarPath = path.join(__dirname, '..', 'syntaxes', 'csp.tmLanguage.json');

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== 'source.csp') return null;
      return vsctm.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath);
    },
  });
  return registry.loadGrammar('source.csp');
}

// Tokenizes `text`; returns [{line, text, scopes}] and the final rule stack.
function tokenize(grammar, text) {
  let stack = vsctm.INITIAL;
  const tokens = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens) {
      tokens.push({ line: i + 1, text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes });
    }
    stack = r.ruleStack;
  });
  return { tokens, stack };
}

function cspFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...cspFiles(p));
    else if (entry.name.endsWith('.csp')) out.push(p);
  }
  return out.sort();
}

let failures = 0;
function check(name, fn) {
  try {
    fn();
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e.message}`);
  }
}

// The scopes of the first token whose text is `text` (after `skip` such tokens).
function scopesOf(tokens, text, skip = 0) {
  const found = tokens.filter((t) => t.text === text);
  assert.ok(found.length > skip, `no token ${JSON.stringify(text)} in ${JSON.stringify(tokens.map((t) => t.text))}`);
  return found[skip].scopes;
}

function expectScope(snippet, text, scope, skip = 0) {
  check(`${JSON.stringify(snippet)}: ${JSON.stringify(text)} is ${scope}`, () => {
    const scopes = scopesOf(tokenize(grammar, snippet).tokens, text, skip);
    assert.ok(
      scopes.some((s) => s === scope || s.startsWith(scope + '.')),
      `scopes ${scopes.join(' ')}`,
    );
  });
}

function expectNoScope(snippet, text, scope) {
  check(`${JSON.stringify(snippet)}: ${JSON.stringify(text)} is not ${scope}`, () => {
    const scopes = scopesOf(tokenize(grammar, snippet).tokens, text);
    assert.ok(!scopes.some((s) => s === scope || s.startsWith(scope + '.')), `scopes ${scopes.join(' ')}`);
  });
}

let grammar;

async function main() {
  grammar = await loadGrammar();

  // ---- whole files
  const files = [...cspFiles(path.join(root, 'examples')), ...cspFiles(path.join(root, 'std'))];
  assert.ok(files.length > 0, 'no .csp files found');
  for (const file of files) {
    const rel = path.relative(root, file);
    check(`${rel} tokenizes cleanly`, () => {
      const { tokens, stack } = tokenize(grammar, fs.readFileSync(file, 'utf8'));
      const bad = tokens.find((t) => t.scopes.some((s) => s.startsWith('invalid')));
      assert.ok(!bad, `invalid token ${JSON.stringify(bad && bad.text)} on line ${bad && bad.line}`);
      assert.strictEqual(stack.depth, 1, `a scope is still open at the end of the file: ${stack}`);
    });
  }

  // ---- snippets
  expectScope('let x = 1', 'let', 'storage.type');
  expectScope('if a { b } else { c }', 'if', 'keyword.control');
  expectScope('if a { b } else { c }', 'else', 'keyword.control');
  expectScope('for k, v in m { }', 'for', 'keyword.control');
  expectScope('for k, v in m { }', 'in', 'keyword.operator.word');
  expectScope('try { f() } catch e { throw e } finally { }', 'catch', 'keyword.control');
  expectScope('try { f() } catch e { throw e } finally { }', 'throw', 'keyword.control');
  expectScope('go worker(1)', 'go', 'keyword.control.concurrency');
  expectScope('select {\ncase v = <-c { }\ndefault { }\n}', 'select', 'keyword.control');
  expectScope('select {\ncase v = <-c { }\ndefault { }\n}', 'case', 'keyword.control');
  expectScope('select {\ncase v = <-c { }\ndefault { }\n}', '<-', 'keyword.operator.channel');
  expectScope('lock mu { wait { } }', 'lock', 'keyword.control.concurrency');
  expectScope('lock mu { wait { } }', 'wait', 'keyword.control.concurrency');
  expectScope('let x = yield 1', 'yield', 'keyword.control.concurrency');
  expectScope('import "std/async" as a', 'import', 'keyword.control.import');
  expectScope('import "std/async" as a', '"std/async"', 'string.quoted.double');
  expectScope('a is not nil', 'is', 'keyword.operator.word');
  expectScope('a is not nil', 'nil', 'constant.language.nil');
  expectScope('x = true || false', 'true', 'constant.language.boolean');
  expectScope('x = true || false', '||', 'keyword.operator.logical');
  expectScope('let c = chan(3)', 'chan', 'support.function.builtin');

  expectScope('let s = "hi"', 'hi', 'string.quoted.double');
  expectScope('let s = "a\\tb"', '\\t', 'constant.character.escape');
  expectScope('let s = "a\\u{1F600}b"', '\\u{1F600}', 'constant.character.escape');
  expectScope('let s = "cost \\${x}"', '\\$', 'constant.character.escape');
  expectScope('let s = "bad \\q"', '\\q', 'invalid.illegal');
  expectScope('let s = "n = ${n + 1}!"', '${', 'punctuation.section.embedded.begin');
  expectScope('let s = "n = ${n + 1}!"', 'n', 'meta.embedded.line');
  expectScope('let s = "n = ${n + 1}!"', 'n', 'variable.other');
  expectScope('let s = "n = ${n + 1}!"', '1', 'constant.numeric');
  expectScope('let s = "n = ${n + 1}!"', '}', 'punctuation.section.embedded.end');
  expectScope('let s = "n = ${n + 1}!"', '!', 'string.quoted.double');
  // Inside `${}` tokens are code (themes reset meta.embedded to the default colour).
  expectScope('let s = "n = ${n + 1}!"', '+', 'keyword.operator.arithmetic');
  // Braces and strings nest inside an interpolation.
  expectScope('let s = "${ {a: 1}["a"] } and ${"in ${x}"}"', ' and ', 'string.quoted.double');
  expectScope('let s = "${ {a: 1}["a"] } and ${"in ${x}"}"', 'x', 'variable.other');

  expectScope('x = 1 // note', '// note'.slice(2), 'comment.line.double-slash');
  expectScope('x = 1 /* a\nb */ y', 'b ', 'comment.block');
  expectScope('x = 1 /* a\nb */ y', 'y', 'variable.other');
  expectScope('let u = "http://x"', 'http://x', 'string.quoted.double');
  expectNoScope('let u = "http://x"', 'http://x', 'comment');
  expectScope('#!/usr/bin/env csp\nprint(1)', '#!/usr/bin/env csp', 'comment.line.shebang');

  expectScope('n = 42', '42', 'constant.numeric.integer');
  expectScope('n = 0xff', '0xff', 'constant.numeric.hex');
  expectScope('n = 0b101', '0b101', 'constant.numeric.binary');
  expectScope('n = 3.25', '3.25', 'constant.numeric.float');
  expectScope('n = 1e9', '1e9', 'constant.numeric.float');
  expectScope('for i in 1..10 { }', '..', 'keyword.operator.range');
  expectScope('for i in 1..10 { }', '10', 'constant.numeric.integer');

  expectScope('fn greet(name) { }', 'fn', 'storage.type.function');
  expectScope('fn greet(name) { }', 'greet', 'entity.name.function');
  expectScope('let f = fn(x) => x * 2', '=>', 'storage.type.function.arrow');
  expectScope('greet("world")', 'greet', 'entity.name.function.call');
  expectScope('print("world")', 'print', 'support.function.builtin');
  expectScope('xs.map(f)', 'map', 'entity.name.function.member');
  expectScope('m.select(1)', 'select', 'entity.name.function.member');
  expectScope('e.message', 'message', 'variable.other.property');
  expectScope('let m = {name: 1, chan: 2}', 'name', 'variable.other.property.key');
  expectScope('x = a ? b : c', '?', 'keyword.operator.ternary');
  expectScope('x += 1', '+=', 'keyword.operator.assignment.compound');
  expectScope('x **= 2', '**=', 'keyword.operator.assignment.compound');
  expectScope('y = -2 ** n', '**', 'keyword.operator.arithmetic');
  expectScope('x = a << 2 | b & ~c ^ d', '<<', 'keyword.operator.bitwise');

  if (failures > 0) {
    console.log(`${failures} failed`);
    process.exit(1);
  }
  console.log(`ok: ${files.length} files tokenized, snippets checked`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
