//! The REPL's line-editing thread: rustyline with history and completion. It
//! reads a whole entry (asking the parser whether more lines are needed), hands it
//! to the session thread, and waits until the session is ready for the next one.

use super::{Console, Input};
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{Context, Editor, Helper, Highlighter, Hinter, Validator};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

pub const PROMPT: &str = "csp> ";
pub const MORE: &str = "...> ";

const KEYWORDS: &[&str] = &[
    "let", "fn", "if", "else", "while", "for", "in", "is", "not", "return", "break", "continue", "true", "false",
    "nil", "go", "chan", "select", "case", "default", "lock", "wait", "yield", "try", "catch", "finally", "throw",
    "import", "as",
];

/// Methods offered after a `.`.
const METHODS: &[&str] = &[
    "push",
    "pop",
    "insert",
    "remove",
    "contains",
    "index_of",
    "slice",
    "sort",
    "reverse",
    "join",
    "split",
    "trim",
    "replace",
    "upper",
    "lower",
    "starts_with",
    "ends_with",
    "keys",
    "values",
    "items",
    "map",
    "filter",
    "reduce",
    "each",
    "len",
    "cancel",
    "done",
    "add",
    "resume",
    "close",
    "message",
    "trace",
    "others",
];

/// Completes keywords and globals, or methods after a dot.
#[derive(Helper, Highlighter, Hinter, Validator)]
struct Completion {
    globals: Arc<Mutex<Vec<String>>>,
}

impl Completer for Completion {
    type Candidate = String;

    fn complete(&self, line: &str, pos: usize, _: &Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        let start = line[..pos].rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let word = &line[start..pos];
        let after_dot = line[..start].ends_with('.');
        let mut found: Vec<String> = if after_dot {
            METHODS.iter().filter(|m| m.starts_with(word)).map(|m| m.to_string()).collect()
        } else {
            let globals = self.globals.lock().map(|g| g.clone()).unwrap_or_default();
            KEYWORDS.iter().map(|k| k.to_string()).chain(globals).filter(|n| n.starts_with(word)).collect()
        };
        found.sort();
        found.dedup();
        Ok((start, found))
    }
}

/// Is `text` a prefix of valid input, cut short (an open brace, bracket, string)?
pub fn incomplete(text: &str) -> bool {
    matches!(crate::syntax::parse(text), Err(errs) if errs.iter().any(|e| e.at_eof))
}

fn history_file() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".csp_history"))
}

/// The reader thread's body.
pub fn run(console: Console, globals: Arc<Mutex<Vec<String>>>, entries: Sender<Input>, ready: Receiver<()>) {
    let mut rl: Editor<Completion, DefaultHistory> = match Editor::new() {
        Ok(rl) => rl,
        Err(e) => {
            console.err(&format!("csp: cannot start the line editor: {e}\n"));
            let _ = entries.send(Input::Quit);
            return;
        }
    };
    rl.set_helper(Some(Completion { globals }));
    let history = history_file();
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    if let Ok(p) = rl.create_external_printer() {
        console.set_printer(Box::new(p));
    }
    while ready.recv().is_ok() {
        let Some(entry) = read_entry(&mut rl, &console) else {
            let _ = entries.send(Input::Quit);
            break;
        };
        let _ = rl.add_history_entry(entry.trim_end());
        if let Some(h) = &history {
            let _ = rl.save_history(h);
        }
        if entries.send(Input::Entry(entry)).is_err() {
            break;
        }
    }
}

/// Reads lines until they form a whole entry; None on Ctrl-D or `:quit`.
fn read_entry(rl: &mut Editor<Completion, DefaultHistory>, console: &Console) -> Option<String> {
    let mut buf = String::new();
    loop {
        console.prompting(true);
        let line = rl.readline(if buf.is_empty() { PROMPT } else { MORE });
        console.prompting(false);
        match line {
            Ok(line) => {
                buf.push_str(&line);
                buf.push('\n');
                let t = buf.trim();
                if t.is_empty() {
                    buf.clear();
                } else if t == ":quit" || t == ":q" {
                    return None;
                } else if t.starts_with(':') || !incomplete(&buf) {
                    return Some(buf);
                }
            }
            // Ctrl-C at the prompt drops the half-typed entry.
            Err(ReadlineError::Interrupted) => buf.clear(),
            Err(ReadlineError::Eof) if !buf.is_empty() => buf.clear(),
            Err(_) => return None,
        }
    }
}
