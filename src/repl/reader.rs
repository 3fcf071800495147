//! The REPL's line-editing thread: rustyline with history and completion. It
//! reads a whole entry (asking the parser whether more lines are needed), hands it
//! to the session thread, and waits until the session is ready for the next one.
//!
//! No key is lost: rustyline reads the terminal in chunks, and keys read past
//! the end of a line (type-ahead, a paste) wait in its buffer for the next
//! `readline` (the `buffer-redux` feature); keys typed while an entry runs wait
//! in the terminal. A failed `readline` would drop that buffer, so Ctrl-C and
//! Ctrl-D end the line like Enter instead, noting which key it was.

use super::{Console, Input};
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{Cmd, ConditionalEventHandler, Context, Editor, Event, EventContext, EventHandler, KeyEvent};
use rustyline::{Helper, Highlighter, Hinter, RepeatCount, Validator};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

pub const PROMPT: &str = "csp> ";
pub const MORE: &str = "...> ";

pub(crate) const KEYWORDS: &[&str] = &[
    "let", "fn", "if", "else", "while", "for", "in", "is", "not", "return", "break", "continue", "true", "false",
    "nil", "go", "chan", "select", "case", "default", "lock", "wait", "yield", "try", "catch", "finally", "throw",
    "import", "as",
];

/// What completion knows of the session, published before each prompt.
#[derive(Default, Clone)]
pub struct Names {
    /// Globals of the main namespace, with the type of their value.
    pub globals: Vec<(String, &'static str)>,
    /// Names after a `.` for some globals: a module's exports, a map's string keys.
    pub members: std::collections::HashMap<String, Vec<String>>,
}

/// Names offered after a `.` whose receiver is unknown: every method and field.
pub(crate) fn any_member() -> Vec<&'static str> {
    let kinds =
        ["string", "list", "map", "chan", "task", "waitgroup", "coroutine", "error", "bytes", "stream", "process"];
    kinds.iter().flat_map(|k| members_of(k)).collect()
}

/// Methods, and for errors and coroutines the fields, of a kind of value.
pub(crate) fn members_of(kind: &str) -> Vec<&'static str> {
    match kind {
        "error" => vec!["kind", "message", "others", "trace"],
        "coroutine" => vec!["close", "done", "resume", "throw"],
        "process" => vec!["kill", "pid", "stderr", "stdin", "stdout", "wait"],
        "time" => crate::natives::time::MEMBERS.to_vec(),
        k => crate::natives::methods_of(k),
    }
}

/// What is offered after `receiver.`: by the receiver's type where the text
/// shows it (a string or list literal, a global of known type, a module).
fn members(names: &Names, receiver: &str) -> Vec<String> {
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let r = receiver.trim_end();
    if r.ends_with('"') {
        return owned(&members_of("string"));
    }
    if r.ends_with(']') {
        return owned(&members_of("list"));
    }
    let start = r.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    let ident = &r[start..];
    let before = &r[..start];
    if !ident.is_empty() && !before.ends_with('.') {
        if let Some(m) = names.members.get(ident) {
            let mut found = m.clone();
            if let Some((_, kind)) = names.globals.iter().find(|(n, _)| n == ident) {
                found.extend(owned(&members_of(kind)));
            }
            return found;
        }
        if let Some((_, kind)) = names.globals.iter().find(|(n, _)| n == ident) {
            return owned(&members_of(kind));
        }
    }
    owned(&any_member())
}

/// The REPL's `:commands`, completed at the start of a line.
const COMMANDS: &[&str] = &[":disasm", ":fibers", ":help", ":load", ":quit"];

/// Completes keywords and globals, members after a dot, `:commands`.
#[derive(Helper, Highlighter, Hinter, Validator)]
struct Completion {
    names: Arc<Mutex<Names>>,
}

impl Completer for Completion {
    type Candidate = String;

    fn complete(&self, line: &str, pos: usize, _: &Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        let names = self.names.lock().map(|n| n.clone()).unwrap_or_default();
        Ok(candidates(&names, line, pos))
    }
}

/// Is `text` a prefix of valid input, cut short (an open brace, bracket, string)?
pub fn incomplete(text: &str) -> bool {
    matches!(crate::syntax::parse(text), Err(errs) if errs.iter().any(|e| e.at_eof))
}

fn history_file() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".csp_history"))
}

/// A key that ends the line without it being entered.
#[derive(Clone, Copy, PartialEq)]
enum Stop {
    None,
    /// Ctrl-C: drop the half-typed entry.
    Interrupt,
    /// Ctrl-D on an empty line: leave, or drop the half-typed entry.
    Eof,
}

/// Binds `key` to end the line and set `stop` (see the module comment).
struct StopKey(Stop, Arc<Mutex<Stop>>);

impl ConditionalEventHandler for StopKey {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext) -> Option<Cmd> {
        if self.0 == Stop::Eof && !ctx.line().is_empty() {
            return None; // Ctrl-D inside a line deletes a character
        }
        *self.1.lock().ok()? = self.0;
        Some(Cmd::AcceptLine)
    }
}

type Rl = Editor<Completion, DefaultHistory>;

/// The reader thread's body.
pub fn run(console: Console, names: Arc<Mutex<Names>>, entries: Sender<Input>, ready: Receiver<()>) {
    let mut rl: Rl = match Editor::new() {
        Ok(rl) => rl,
        Err(e) => {
            console.err(&format!("csp: cannot start the line editor: {e}\n"));
            let _ = entries.send(Input::Quit);
            return;
        }
    };
    rl.set_helper(Some(Completion { names }));
    let stop = Arc::new(Mutex::new(Stop::None));
    for (key, k) in [(KeyEvent::ctrl('C'), Stop::Interrupt), (KeyEvent::ctrl('D'), Stop::Eof)] {
        rl.bind_sequence(key, EventHandler::Conditional(Box::new(StopKey(k, stop.clone()))));
    }
    let history = history_file();
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    if let Ok(p) = rl.create_external_printer() {
        console.set_printer(Box::new(p));
    }
    while ready.recv().is_ok() {
        let entry = match read_entry(&mut rl, &console, &stop) {
            Read::Entry(text) => text,
            Read::Unreadable(why) => {
                if entries.send(Input::Unreadable(why)).is_err() {
                    break;
                }
                continue;
            }
            Read::End => {
                let _ = entries.send(Input::Quit);
                break;
            }
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

enum Read {
    Entry(String),
    /// A line that is not text (bytes that are not UTF-8, piped in): dropped
    /// with an error, as an entry with a syntax error would be.
    Unreadable(String),
    /// Ctrl-D, `:quit`, or input that cannot be read at all.
    End,
}

/// Reads lines until they form a whole entry.
fn read_entry(rl: &mut Rl, console: &Console, stop: &Mutex<Stop>) -> Read {
    let mut buf = String::new();
    loop {
        console.prompting(true);
        let line = rl.readline(if buf.is_empty() { PROMPT } else { MORE });
        console.prompting(false);
        let key = stop.lock().map(|mut s| std::mem::replace(&mut *s, Stop::None)).unwrap_or(Stop::None);
        match (line, key) {
            // Ctrl-C drops the half-typed entry; Ctrl-D on an empty line leaves,
            // or drops the half-typed entry at a continuation line.
            (Ok(_), Stop::Interrupt) => buf.clear(),
            (Ok(_), Stop::Eof) if buf.is_empty() => return Read::End,
            (Ok(_), Stop::Eof) => buf.clear(),
            (Ok(line), Stop::None) => {
                buf.push_str(&line);
                buf.push('\n');
                let t = buf.trim();
                if t.is_empty() {
                    buf.clear();
                } else if t == ":quit" || t == ":q" {
                    return Read::End;
                } else if t.starts_with(':') || !incomplete(&buf) {
                    return Read::Entry(buf);
                }
            }
            // The terminal's interrupt key, if not Ctrl-C, still fails the read.
            (Err(ReadlineError::Interrupted), _) => buf.clear(),
            (Err(ReadlineError::Eof), _) if !buf.is_empty() => buf.clear(),
            (Err(ReadlineError::Eof), _) => return Read::End,
            (Err(e), _) if is_not_utf8(&e) => return Read::Unreadable("error: input line is not valid UTF-8\n".into()),
            (Err(e), _) => {
                console.err(&format!("csp: cannot read input: {e}\n"));
                return Read::End;
            }
        }
    }
}

fn is_not_utf8(e: &ReadlineError) -> bool {
    matches!(e, ReadlineError::Io(e) if e.kind() == std::io::ErrorKind::InvalidData)
}

/// Where the word being completed starts, and what it may become.
fn candidates(names: &Names, line: &str, pos: usize) -> (usize, Vec<String>) {
    let start = line[..pos].rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    if line[..start].trim_start() == ":" {
        let typed = line[..pos].trim_start();
        let found = COMMANDS.iter().filter(|c| c.starts_with(typed)).map(|c| c.to_string()).collect();
        return (line.len() - line.trim_start().len(), found);
    }
    let word = &line[start..pos];
    let mut found: Vec<String> = match line[..start].strip_suffix('.') {
        Some(receiver) => members(names, receiver),
        // No word begun: the Tab is kept as typed (an indent, or a tab in a
        // paste that did not come as a bracketed paste).
        None if word.is_empty() => return (pos, vec!["\t".to_string()]),
        None => {
            let globals = names.globals.iter().map(|(n, _)| n.clone());
            KEYWORDS.iter().map(|k| k.to_string()).chain(globals).collect()
        }
    };
    found.retain(|n| n.starts_with(word));
    found.sort();
    found.dedup();
    (start, found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_by_the_receivers_type() {
        let mut names = Names::default();
        names.globals.push(("xs".into(), "list"));
        names.globals.push(("async".into(), "module"));
        names.members.insert("async".into(), vec!["pmap".into(), "all".into()]);
        let at_end = |line: &str| candidates(&names, line, line.len());
        assert_eq!(at_end("\"abc\".re"), (6, vec!["repeat".to_string(), "replace".to_string()]));
        assert_eq!(at_end("xs.co").1, ["contains", "copy"]);
        assert_eq!(at_end("m = {}; [1].ea").1, ["each"]);
        assert_eq!(at_end("async.p").1, ["pmap"]);
        assert_eq!(at_end(":fi"), (0, vec![":fibers".to_string()]));
        assert_eq!(at_end("  :"), (2, COMMANDS.iter().map(|c| c.to_string()).collect()));
        assert!(at_end("unknown.ge").1.contains(&"get".to_string()), "any member when the type is unknown");
        assert_eq!(at_end("as").1, ["as", "async"]);
        assert_eq!(at_end("\t"), (1, vec!["\t".to_string()]), "a Tab where no word is begun stays a Tab");
        assert_eq!(at_end("let x = "), (8, vec!["\t".to_string()]));
    }
}
