//! `csp lsp` at the protocol level: JSON-RPC with Content-Length framing over
//! the server's stdin and stdout, one request of each kind.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

struct Server {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            len = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Server {
    fn start() -> Server {
        Server::start_with(json!({}))
    }

    fn start_with(capabilities: Value) -> Server {
        Server::start_init(json!({"processId": null, "rootUri": null, "capabilities": capabilities}))
    }

    fn start_init(init: Value) -> Server {
        let mut child = Command::new(CSP)
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("csp lsp starts");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, incoming) = channel();
        std::thread::spawn(move || {
            while let Some(m) = read_message(&mut stdout) {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        let mut s = Server { child, stdin, incoming, next_id: 1 };
        let init = s.request("initialize", init);
        assert!(init["result"]["capabilities"]["definitionProvider"].as_bool().unwrap_or(false), "{init}");
        s.notify("initialized", json!({}));
        s
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message that `pick` accepts (others are dropped); fails after 20 s.
    fn wait_for(&mut self, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
        loop {
            match self.incoming.recv_timeout(Duration::from_secs(20)) {
                Ok(m) if pick(&m) => return m,
                Ok(_) => {}
                Err(_) => panic!("no {what} from csp lsp"),
            }
        }
    }

    /// The whole response (with `result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_for(method, |m| m["id"] == json!(id) && m.get("method").is_none())
    }

    fn result(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let m = self
            .wait_for("diagnostics", |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri);
        m["params"]["diagnostics"].as_array().cloned().unwrap_or_default()
    }

    fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        let doc = json!({"uri": uri, "languageId": "csp", "version": 1, "text": text});
        self.notify("textDocument/didOpen", json!({"textDocument": doc}));
        self.diagnostics(uri)
    }

    fn shutdown(mut self) {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r["result"], Value::Null, "{r}");
        self.notify("exit", Value::Null);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "csp lsp exited with {status}");
    }
}

/// A temp dir with `files`, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str, files: &[(&str, &str)]) -> Dir {
        let dir = std::env::temp_dir().join(format!("csp-lsp-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (f, text) in files {
            std::fs::write(dir.join(f), text).unwrap();
        }
        Dir(dir)
    }
    fn uri(&self, f: &str) -> String {
        format!("file://{}", self.0.join(f).display())
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `line:character` of the `n`th character of `needle` in `text` (0-based line).
fn pos(text: &str, needle: &str, n: usize) -> Value {
    let at = text.find(needle).unwrap_or_else(|| panic!("{needle} not in text")) + n;
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": col})
}

fn at(uri: &str, text: &str, needle: &str, n: usize) -> Value {
    json!({"textDocument": {"uri": uri}, "position": pos(text, needle, n)})
}

fn labels(r: &Value) -> Vec<String> {
    let items = r.as_array().or_else(|| r["items"].as_array()).cloned().unwrap_or_default();
    items.iter().map(|i| i["label"].as_str().unwrap_or_default().to_string()).collect()
}

#[test]
fn initialize_and_shutdown() {
    Server::start().shutdown();
}

#[test]
fn negotiates_utf8_positions_when_offered() {
    let mut s = Server::start_with(json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}}));
    let text = "let s = \"é\"; print(nope)\n";
    let d = s.open("file:///tmp/csp-lsp-utf8.csp", text);
    assert_eq!(d[0]["range"]["start"]["character"], json!(text.find("nope").unwrap()), "{d:?}");
    s.shutdown();
}

#[test]
fn diagnostics_as_you_type_then_cleared() {
    let mut s = Server::start();
    let uri = "file:///tmp/csp-lsp-diag.csp";
    let text = "let x = 1\nprint(y)\n";
    let d = s.open(uri, text);
    assert_eq!(d.len(), 1, "{d:?}");
    // The message `csp check` gives, at the span it marks.
    assert!(d[0]["message"].as_str().unwrap().starts_with("undefined name 'y'"), "{d:?}");
    assert_eq!(d[0]["range"]["start"], pos(text, "y)", 0));
    assert_eq!(d[0]["source"], "csp");
    let change = json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "let x = (\n"}]});
    s.notify("textDocument/didChange", change);
    let d = s.diagnostics(uri);
    assert_eq!(d[0]["code"], "csp::syntax", "{d:?}");
    let change = json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": "print(1)\n"}]});
    s.notify("textDocument/didChange", change);
    assert!(s.diagnostics(uri).is_empty());
    // Closing a buffer with errors clears them.
    let change = json!({"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"text": "print(z)\n"}]});
    s.notify("textDocument/didChange", change);
    assert_eq!(s.diagnostics(uri).len(), 1);
    s.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
    assert!(s.diagnostics(uri).is_empty());
    s.shutdown();
}

#[test]
fn definition_of_locals_globals_and_imported_functions() {
    let lib = "// Adds.\nfn add(a, b) {\n    return a + b\n}\n";
    let main = "import \"./lib.csp\" as lib\nlet total = 0\nfn f(n) {\n    let k = n * 2\n    return k + total + lib.add(1, 2)\n}\nprint(f(1))\n";
    let dir = Dir::new("def", &[("lib.csp", lib), ("main.csp", main)]);
    let uri = dir.uri("main.csp");
    let mut s = Server::start();
    assert!(s.open(&uri, main).is_empty());
    let local = s.result("textDocument/definition", at(&uri, main, "k +", 0));
    assert_eq!(local["uri"], uri.as_str());
    assert_eq!(local["range"]["start"], pos(main, "k = n", 0));
    let global = s.result("textDocument/definition", at(&uri, main, "total +", 2));
    assert_eq!(global["range"]["start"], pos(main, "total = 0", 0));
    let func = s.result("textDocument/definition", at(&uri, main, "f(1)", 0));
    assert_eq!(func["range"]["start"], pos(main, "f(n)", 0));
    let imported = s.result("textDocument/definition", at(&uri, main, "add(1", 1));
    let lib_path = std::fs::canonicalize(dir.0.join("lib.csp")).unwrap();
    assert_eq!(imported["uri"], format!("file://{}", lib_path.display()));
    assert_eq!(imported["range"]["start"], pos(lib, "add(a", 0));
    let alias = s.result("textDocument/definition", at(&uri, main, "lib.add", 1));
    assert_eq!(alias["uri"], format!("file://{}", lib_path.display()), "the alias goes to the module's file");
    // A builtin has no definition in the file.
    assert_eq!(s.result("textDocument/definition", at(&uri, main, "print", 1)), Value::Null);
    s.shutdown();
}

/// Hover over a function of a relative module shows the `//` comment above
/// it, as for `std/` modules; over a call of a function imported by name too.
#[test]
fn hover_shows_the_comment_of_a_relative_modules_function() {
    let lib = "// Adds two numbers, carefully.\nfn add(a, b) {\n    return a + b\n}\n";
    let main = "import \"./lib.csp\" as lib\nprint(lib.add(1, 2))\n";
    let dir = Dir::new("hover_rel", &[("lib.csp", lib), ("main.csp", main)]);
    let uri = dir.uri("main.csp");
    let mut s = Server::start();
    assert!(s.open(&uri, main).is_empty());
    let h = s.result("textDocument/hover", at(&uri, main, "add(1", 1));
    let v = h["contents"]["value"].as_str().unwrap_or_default();
    assert!(v.contains("fn add(a, b)") && v.contains("Adds two numbers, carefully."), "{h}");
    s.shutdown();
}

#[test]
fn hover_shows_the_reference_text() {
    let mut s = Server::start();
    let uri = "file:///tmp/csp-lsp-hover.csp";
    let text = "import \"std/sync\" as sy\nlet xs = [1, 2]\nxs.push(len(xs))\nfn double(n) { return n * 2 }\nprint(double(2), sy.once)\n";
    s.open(uri, text);
    let h = s.result("textDocument/hover", at(uri, text, "len(", 1));
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(v.contains("len(v)") && v.contains("length"), "{v}");
    assert_eq!(h["range"]["start"], pos(text, "len(", 0));
    let h = s.result("textDocument/hover", at(uri, text, "push", 2));
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(v.contains("xs.push(v)") && v.contains("appends"), "{v}");
    let h = s.result("textDocument/hover", at(uri, text, "double(2", 0));
    assert!(h["contents"]["value"].as_str().unwrap().contains("fn double(n)"), "{h}");
    // With a syntax error elsewhere, the other lines still answer.
    let broken = text.replace("print(double(2), sy.once)", "print(double(2), sy.once)\nlet oops = (1 +)\nlet more = (");
    let change = json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": broken}]});
    s.notify("textDocument/didChange", change);
    assert!(!s.diagnostics(uri).is_empty());
    let h = s.result("textDocument/hover", at(uri, &broken, "double(2", 0));
    assert!(h["contents"]["value"].as_str().unwrap().contains("fn double(n)"), "{h}");
    let d = s.result("textDocument/definition", at(uri, &broken, "xs.push", 0));
    assert_eq!(d["range"]["start"], pos(&broken, "xs = [", 0));
    // A module's function: its signature and the comment above it.
    let h = s.result("textDocument/hover", at(uri, text, "once)", 1));
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(v.contains("fn once(") && !v.contains("//") && v.len() > 40, "{v}");
    s.shutdown();
}

impl Server {
    /// Completion labels at `needle`'s `n`th character once the document is `text`.
    fn complete(&mut self, uri: &str, version: i64, text: &str, needle: &str, n: usize) -> Vec<String> {
        let change = json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]});
        self.notify("textDocument/didChange", change);
        self.diagnostics(uri);
        labels(&self.result("textDocument/completion", at(uri, text, needle, n)))
    }
}

#[test]
fn completion_of_scope_keywords_methods_and_module_members() {
    let mut s = Server::start();
    let uri = "file:///tmp/csp-lsp-complete.csp";
    let base = "import \"std/sync\" as sy\nlet xs = [1]\nlet s = \"a\"\nfn go_on(count) {\n    let counter = 1\n    HERE\n}\nprint(go_on(1))\n";
    s.open(uri, base);
    // Typing a name: what is in scope there, keywords, builtins.
    let text = base.replace("HERE", "co");
    let names = s.complete(uri, 2, &text, "co\n", 2);
    assert!(names.contains(&"count".into()) && names.contains(&"counter".into()), "{names:?}");
    assert!(names.contains(&"continue".into()), "keywords: {names:?}");
    assert!(!names.contains(&"xs".into()), "only names starting with the word: {names:?}");
    let text = base.replace("HERE", "");
    let all = s.complete(uri, 3, &text, "\n}\nprint", 0);
    for name in ["xs", "go_on", "count", "counter", "len", "while"] {
        assert!(all.contains(&name.into()), "{name} missing: {all:?}");
    }
    // After a dot: the methods of a list, of a string; a module's members.
    let text = base.replace("HERE", "xs.");
    let methods = s.complete(uri, 4, &text, "xs.\n", 3);
    assert!(methods.contains(&"push".into()) && methods.contains(&"pop".into()), "{methods:?}");
    assert!(!methods.contains(&"upper".into()), "only list methods: {methods:?}");
    let text = base.replace("HERE", "sy.");
    let members = s.complete(uri, 5, &text, "sy.\n", 3);
    assert!(members.contains(&"semaphore".into()) && members.contains(&"once".into()), "{members:?}");
    let text = base.replace("HERE", "s.up");
    assert_eq!(s.complete(uri, 6, &text, "s.up", 4), vec!["upper".to_string()]);
    s.shutdown();
}

/// The std modules of the command-line kit complete like any other: their
/// members come from their source, embedded in the binary.
#[test]
fn completion_of_the_flag_log_and_url_modules() {
    let mut s = Server::start();
    let uri = "file:///tmp/csp-lsp-kit.csp";
    let base = "import \"std/flag\"\nimport \"std/log\"\nimport \"std/url\"\nHERE\n";
    s.open(uri, base);
    for (v, (prefix, want)) in [
        ("flag.", &["parser"][..]),
        ("log.", &["debug", "info", "warn", "error", "fatal", "with", "configure", "new", "enabled"][..]),
        ("url.", &["parse", "resolve", "build", "join_path", "escape", "unescape", "parse_query", "encode_query"][..]),
    ]
    .into_iter()
    .enumerate()
    {
        let text = base.replace("HERE", prefix);
        let got = s.complete(uri, v as i64 + 2, &text, &format!("{prefix}\n"), prefix.len());
        for w in want {
            assert!(got.contains(&w.to_string()), "{prefix}{w} missing: {got:?}");
        }
        assert!(!got.iter().any(|g| g.starts_with("__")), "hidden names: {got:?}");
    }
    s.shutdown();
}

/// `std/isolate` as the editor knows it: its members complete (not the
/// driver's private ones), hover shows `isolate.run`'s text, and signature
/// help its parameters.
#[test]
fn the_isolate_module_completes_hovers_and_helps() {
    let mut s = Server::start();
    let uri = "file:///tmp/csp-lsp-isolate.csp";
    let base = "import \"std/isolate\"\nfn sq(x) { return x * x }\nHERE\n";
    s.open(uri, base);
    let text = base.replace("HERE", "isolate.");
    let got = s.complete(uri, 2, &text, "isolate.\n", 8);
    for w in ["run", "map", "count"] {
        assert!(got.contains(&w.to_string()), "isolate.{w} missing: {got:?}");
    }
    assert!(!got.iter().any(|g| g.starts_with('_')), "private names: {got:?}");
    let text = base.replace("HERE", "print(wait isolate.run(sq, 3))");
    let change = json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": text}]});
    s.notify("textDocument/didChange", change);
    assert_eq!(s.diagnostics(uri), Vec::<Value>::new());
    let h = s.result("textDocument/hover", at(uri, &text, "run(sq", 1));
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(v.contains("fn run(f, ...args)") && v.contains("worker isolate"), "{v}");
    let h = s.result("textDocument/signatureHelp", at(uri, &text, "sq, 3", 4));
    assert_eq!(h["signatures"][0]["label"], "fn run(f, ...args)", "{h}");
    s.shutdown();
}

#[test]
fn document_symbols() {
    let mut s = Server::start();
    let uri = "file:///tmp/csp-lsp-symbols.csp";
    let text = "import \"std/sync\"\nlet limit = 3\nfn outer(a) {\n    fn inner() { }\n    return a\n}\n";
    s.open(uri, text);
    let syms = s.result("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}}));
    let names: Vec<&str> = syms.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["sync", "limit", "outer"]);
    let outer = &syms[2];
    assert_eq!(outer["kind"], 12); // Function
    assert_eq!(outer["children"][0]["name"], "inner");
    assert_eq!(syms[1]["selectionRange"]["start"], pos(text, "limit", 0));
    s.shutdown();
}

fn edits(r: &Value, uri: &str) -> Vec<(Value, String)> {
    let list = r["changes"][uri].as_array().unwrap_or_else(|| panic!("no edits for {uri}: {r}"));
    list.iter().map(|e| (e["range"]["start"].clone(), e["newText"].as_str().unwrap().to_string())).collect()
}

#[test]
fn rename_and_references_of_locals_and_globals_within_the_file() {
    let mut s = Server::start();
    let uri = "file:///tmp/csp-lsp-rename.csp";
    let text = "let n = 1\nfn f(x) {\n    let n = x\n    return n + 1\n}\nprint(f(n), n)\n";
    s.open(uri, text);
    let mut p = at(uri, text, "n + 1", 0);
    p["newName"] = json!("m");
    let local = edits(&s.result("textDocument/rename", p), uri);
    let starts: Vec<Value> = local.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(starts, vec![pos(text, "n = x", 0), pos(text, "n + 1", 0)]);
    let mut p = at(uri, text, "n = 1", 0);
    p["newName"] = json!("limit");
    let global = edits(&s.result("textDocument/rename", p), uri);
    assert_eq!(global.len(), 3, "{global:?}");
    assert!(global.iter().all(|(_, t)| t == "limit"));
    // The same uses, as references.
    let mut p = at(uri, text, "n), n", 0);
    p["context"] = json!({"includeDeclaration": false});
    let refs = s.result("textDocument/references", p.clone());
    assert_eq!(refs.as_array().unwrap().len(), 2, "{refs}");
    p["context"] = json!({"includeDeclaration": true});
    let refs = s.result("textDocument/references", p);
    assert_eq!(refs[0]["range"]["start"], pos(text, "n = 1", 0), "{refs}");
    let mut p = at(uri, text, "n = 1", 0);
    p["newName"] = json!("not a name");
    assert!(s.request("textDocument/rename", p).get("error").is_some());
    s.shutdown();
}

#[test]
fn formatting_is_csp_fmt() {
    let mut s = Server::start();
    let uri = "file:///tmp/csp-lsp-format.csp";
    let text = "let   x=1\nfn f(a){\nreturn a}\n";
    s.open(uri, text);
    let options = json!({"tabSize": 4, "insertSpaces": true});
    let edits = s.result("textDocument/formatting", json!({"textDocument": {"uri": uri}, "options": options}));
    let expected = csp::fmt::format_source(text).expect("formats");
    assert_ne!(expected, text);
    assert_eq!(edits[0]["newText"], expected.as_str(), "{edits}");
    assert_eq!(edits[0]["range"]["start"], json!({"line": 0, "character": 0}));
    assert_eq!(edits[0]["range"]["end"], json!({"line": 3, "character": 0}));
    // Already formatted, or not parsing: no edits.
    let change = json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "let x = (\n"}]});
    s.notify("textDocument/didChange", change);
    s.diagnostics(uri);
    let none = s.result("textDocument/formatting", json!({"textDocument": {"uri": uri}, "options": options}));
    assert_eq!(none, json!([]));
    s.shutdown();
}

#[test]
fn a_malformed_request_gets_an_error_and_the_server_goes_on() {
    let mut s = Server::start();
    let bad = s.request("textDocument/definition", json!({"textDocument": 42}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let unknown = s.request("csp/nothing", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let closed = s.request("textDocument/hover", at("file:///tmp/not-open.csp", "x", "x", 0));
    assert!(closed.get("error").is_some(), "{closed}");
    let uri = "file:///tmp/csp-lsp-after.csp";
    assert!(s.open(uri, "print(1)\n").is_empty());
    s.shutdown();
}

/// The code actions offered on the range of `needle` (title → the edit's new text and start).
fn actions(s: &mut Server, uri: &str, text: &str, needle: &str) -> Vec<(String, String, Value)> {
    let range = json!({"start": pos(text, needle, 0), "end": pos(text, needle, needle.len())});
    let p = json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": []}});
    let r = s.result("textDocument/codeAction", p);
    let list = r.as_array().cloned().unwrap_or_default();
    list.iter()
        .map(|a| {
            let edit = &a["edit"]["changes"][uri][0];
            (
                a["title"].as_str().unwrap().to_string(),
                edit["newText"].as_str().unwrap_or("").to_string(),
                edit["range"]["start"].clone(),
            )
        })
        .collect()
}

#[test]
fn lint_warnings_and_quick_fixes_from_the_diagnostics() {
    let mut s = Server::start();
    let uri = "file:///tmp/csp-lsp-actions.csp";
    let text = "let total = 1\nprint(totl)\nfn f() {\n    let unused = 1\n    return 0\n}\nprint(f(), sync.once)\n";
    let d = s.open(uri, text);
    let find = |code: &str| d.iter().find(|x| x["code"] == code).unwrap_or_else(|| panic!("no {code}: {d:?}")).clone();
    let warn = find("csp::lint::unused_variable");
    assert_eq!(warn["severity"], 2, "a warning: {warn}");
    assert_eq!(warn["tags"], json!([1]), "unused code is tagged Unnecessary: {warn}");
    assert_eq!(warn["range"]["start"], pos(text, "unused", 0));
    assert_eq!(find("csp::compile")["severity"], 1);
    // "did you mean `total`?" becomes a fix.
    let fixes = actions(&mut s, uri, text, "totl");
    assert!(fixes.contains(&("Change `totl` to `total`".into(), "total".into(), pos(text, "totl", 0))), "{fixes:?}");
    // A standard module's name, undefined: import it.
    let fixes = actions(&mut s, uri, text, "sync");
    let import = (
        "Add `import \"std/sync\"`".to_string(),
        "import \"std/sync\"\n".to_string(),
        json!({"line": 0, "character": 0}),
    );
    assert!(fixes.contains(&import), "{fixes:?}");
    let fixes = actions(&mut s, uri, text, "unused");
    assert!(fixes.iter().any(|f| f.0 == "Rename to `_unused`" && f.1 == "_unused"), "{fixes:?}");
    // A syntax error's help: `=` assigns; to compare, use `==`.
    let text = "let x = 1\nif x = 1 { print(x) }\n";
    let change = json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]});
    s.notify("textDocument/didChange", change);
    assert_eq!(s.diagnostics(uri)[0]["code"], "csp::syntax");
    let fixes = actions(&mut s, uri, text, "= 1 {");
    assert!(fixes.iter().any(|f| f.1 == "==" && f.2 == pos(text, "= 1 {", 0)), "{fixes:?}");
    // An unused import: remove its line.
    let text = "import \"std/sync\"\nprint(1)\n";
    let change = json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": text}]});
    s.notify("textDocument/didChange", change);
    assert_eq!(s.diagnostics(uri)[0]["code"], "csp::lint::unused_import");
    let fixes = actions(&mut s, uri, text, "import");
    assert!(
        fixes.contains(&("Remove the unused import".into(), String::new(), json!({"line": 0, "character": 0}))),
        "{fixes:?}"
    );
    s.shutdown();
}

#[test]
fn signature_help_inside_calls() {
    let mut s = Server::start();
    let uri = "file:///tmp/csp-lsp-signature.csp";
    let text =
        "fn add(a, b = 2, ...more) { return a }\nlet xs = [1]\nprint(add(1, len(xs), 3, 4), xs.push(\"x, y\"))\n";
    s.open(uri, text);
    let help =
        |s: &mut Server, needle: &str, n: usize| s.result("textDocument/signatureHelp", at(uri, text, needle, n));
    let h = help(&mut s, "len(xs), 3", 0);
    assert_eq!(h["signatures"][0]["label"], "fn add(a, b = ..., ...more)", "{h}");
    assert_eq!(h["activeParameter"], 1, "{h}");
    assert_eq!(h["signatures"][0]["parameters"][1]["label"], "b = ...");
    assert_eq!(help(&mut s, "4), xs", 0)["activeParameter"], 2, "the rest parameter takes the rest");
    let h = help(&mut s, "xs), 3", 0);
    assert_eq!(h["signatures"][0]["label"], "len(v)", "{h}");
    let h = help(&mut s, "y\"))", 0);
    assert_eq!(h["signatures"][0]["label"], "xs.push(v)", "a comma in a string is not an argument's: {h}");
    assert_eq!(h["activeParameter"], 0);
    assert_eq!(help(&mut s, "fn add", 0), Value::Null, "outside any call");
    s.shutdown();
}

#[test]
fn semantic_tokens_and_parameter_inlay_hints() {
    let mut s = Server::start();
    let uri = "file:///tmp/csp-lsp-tokens.csp";
    let text = "import \"std/sync\" as sy\nfn area(width, height) { return width * height }\nlet height = 2\nprint(area(3, height), sy.once) // done\nlet s = sy.semaphore(2)\n";
    s.open(uri, text);
    let init_legend = [
        "namespace",
        "function",
        "method",
        "property",
        "parameter",
        "variable",
        "keyword",
        "string",
        "number",
        "comment",
    ];
    let data = s.result("textDocument/semanticTokens/full", json!({"textDocument": {"uri": uri}}))["data"].clone();
    let data: Vec<u64> = data.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(data.len() % 5, 0);
    // Decode to (line, col, length, type) and look a few up.
    let (mut line, mut col) = (0, 0);
    let mut toks = Vec::new();
    for t in data.chunks(5) {
        line += t[0];
        col = if t[0] == 0 { col + t[1] } else { t[1] };
        toks.push((line, col, t[2], init_legend[t[3] as usize], t[4]));
    }
    let at = |needle: &str| {
        let p = pos(text, needle, 0);
        let (l, c) = (p["line"].as_u64().unwrap(), p["character"].as_u64().unwrap());
        *toks.iter().find(|t| t.0 == l && t.1 == c).unwrap_or_else(|| panic!("no token at {needle}: {toks:?}"))
    };
    assert_eq!(at("sy\n").3, "namespace");
    assert_eq!((at("area(width").3, at("area(width").4), ("function", 1), "declared here");
    assert_eq!(at("width,").3, "parameter");
    assert_eq!(at("height = 2").3, "variable");
    assert_eq!((at("print").3, at("print").4), ("function", 2), "a builtin: defaultLibrary");
    assert_eq!(at("once").3, "variable");
    assert_eq!(at("3, height").3, "number");
    assert_eq!(at("\"std/sync\"").3, "string");
    assert_eq!(at("// done").3, "comment");
    assert_eq!(at("return").3, "keyword");

    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}});
    let hints = s.result("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": range}));
    let hints = hints.as_array().unwrap();
    assert_eq!(hints.len(), 2, "`height` already says its name: {hints:?}");
    // A module's function: its parameter's name from the module's source.
    assert_eq!(hints[1]["position"], pos(text, "2)\n", 0));
    assert_eq!(hints[1]["label"], "n:", "std/sync's `fn semaphore(n)`: {hints:?}");
    assert_eq!(hints[0]["label"], "width:");
    assert_eq!(hints[0]["position"], pos(text, "3, height", 0));
    assert_eq!(hints[0]["kind"], 2);
    s.shutdown();
}

#[test]
fn rename_a_modules_function_across_the_project() {
    let lib = "fn add(a, b) {\n    return a + b\n}\nfn twice(a) { return add(a, a) }\n";
    let main = "import \"./lib.csp\" as lib\nprint(lib.add(1, 2))\n";
    let other = "import \"../lib.csp\"\nprint(lib.add(3, 4), lib.twice(1))\n";
    let unrelated = "fn add(a) { return a }\nprint(add(1))\n";
    let dir = Dir::new("rename-project", &[("lib.csp", lib), ("main.csp", main), ("unrelated.csp", unrelated)]);
    std::fs::create_dir_all(dir.0.join("sub")).unwrap();
    std::fs::write(dir.0.join("sub/other.csp"), other).unwrap();
    let root = format!("file://{}", dir.0.display());
    let mut s = Server::start_init(json!({"processId": null, "rootUri": root, "capabilities": {}}));
    let canon = |f: &str| format!("file://{}", std::fs::canonicalize(dir.0.join(f)).unwrap().display());
    // From a use in another file: `lib.add`.
    let uri = dir.uri("main.csp");
    s.open(&uri, main);
    let mut p = at(&uri, main, "add(1", 0);
    p["newName"] = json!("sum");
    let r = s.result("textDocument/rename", p);
    let changes = r["changes"].as_object().unwrap();
    assert_eq!(changes.len(), 3, "lib, main and sub/other, not unrelated: {r}");
    let lib_edits = edits(&r, &canon("lib.csp"));
    assert_eq!(
        lib_edits.iter().map(|e| e.0.clone()).collect::<Vec<_>>(),
        vec![pos(lib, "add(a, b)", 0), pos(lib, "add(a, a)", 0)]
    );
    assert_eq!(edits(&r, &canon("sub/other.csp"))[0].0, pos(other, "add(3", 0));
    let main_key = if changes.contains_key(&uri) { uri.clone() } else { canon("main.csp") };
    assert_eq!(edits(&r, &main_key)[0].0, pos(main, "add(1", 0));
    // From the declaration, with the module open (its buffer, not the disk, is read).
    let lib_uri = dir.uri("lib.csp");
    s.open(&lib_uri, lib);
    let mut p = at(&lib_uri, lib, "twice(a)", 0);
    p["newName"] = json!("double");
    let r = s.result("textDocument/rename", p);
    assert_eq!(edits(&r, &lib_uri).len(), 1);
    assert_eq!(edits(&r, &canon("sub/other.csp"))[0].0, pos(other, "twice", 0));
    assert!(r["changes"].get(canon("main.csp")).is_none() && r["changes"].get(&uri).is_none(), "{r}");
    s.shutdown();
}
