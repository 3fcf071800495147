//! `csp dap`: a debugger speaking the Debug Adapter Protocol on stdin/stdout
//! (docs/debugging.md). This thread reads requests and answers what needs no
//! program (`initialize`, `launch`'s checks, `disconnect`); the program runs
//! on a thread of its own (program.rs), which answers the rest while the
//! program is stopped and sends the events.

mod breakpoints;
mod eval;
mod inspect;
mod program;
mod step;
mod stop;
mod wire;

use serde_json::{json, Value};
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
pub use wire::{Out, Request};

/// What the two threads share.
#[derive(Default)]
pub struct Shared {
    /// The program is stopped: its thread answers requests now.
    pub stopped: AtomicBool,
    /// Requests wait in the channel, or a pause is asked: the program's thread
    /// looks at the next preemption point.
    pub attention: Arc<AtomicBool>,
    pub pause: AtomicBool,
    /// The program has ended (its thread answers every request with that).
    pub ended: AtomicBool,
    /// The fibers as `threads` lists them while the program runs: id →
    /// name, as the last stop saw them and `thread` events since said.
    pub threads: Mutex<std::collections::BTreeMap<i64, String>>,
}

/// The commands the program's thread answers.
const PROGRAM_COMMANDS: &[&str] = &[
    "setBreakpoints",
    "setExceptionBreakpoints",
    "configurationDone",
    "threads",
    "stackTrace",
    "scopes",
    "variables",
    "evaluate",
    "exceptionInfo",
    "source",
    "continue",
    "next",
    "stepIn",
    "stepOut",
];

/// Requests that only make sense while the program is stopped.
const WHEN_STOPPED: &[&str] =
    &["stackTrace", "scopes", "variables", "evaluate", "continue", "next", "stepIn", "stepOut"];

/// Serves the protocol on stdin/stdout; the process's exit code.
pub fn run() -> i32 {
    match take_stdio() {
        Ok((input, output)) => serve(&mut std::io::BufReader::new(input), Out::new(Box::new(output))),
        Err(e) => {
            crate::err_println!("csp dap: cannot set up stdin and stdout: {e}");
            1
        }
    }
}

/// The protocol's stdin and stdout, moved to descriptors of their own: the
/// program then reads end-of-file on descriptor 0 (`read_line` gets nil)
/// and what writes to descriptor 1 (a child process) goes to stderr, never
/// into the protocol.
fn take_stdio() -> std::io::Result<(std::fs::File, std::fs::File)> {
    use std::os::fd::FromRawFd;
    let moved = |fd: i32| {
        // SAFETY: plain descriptor calls; the copy is owned by the File.
        let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        match copy {
            -1 => Err(std::io::Error::last_os_error()),
            // SAFETY: `copy` is a new descriptor nothing else owns.
            c => Ok(unsafe { std::fs::File::from_raw_fd(c) }),
        }
    };
    let (input, output) = (moved(0)?, moved(1)?);
    let null = std::fs::File::open("/dev/null")?;
    // SAFETY: replacing descriptors 0 and 1, whose originals live on above.
    unsafe {
        use std::os::fd::AsRawFd;
        if libc::dup2(null.as_raw_fd(), 0) == -1 || libc::dup2(2, 1) == -1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok((input, output))
}

/// Serves requests read from `input` until `disconnect` or its end.
pub fn serve(input: &mut impl BufRead, out: Out) -> i32 {
    let shared = Arc::new(Shared::default());
    let mut program: Option<Sender<Request>> = None;
    loop {
        let body = match wire::read_body(input) {
            Ok(b) => b,
            Err(wire::ReadError::Closed) => return 0,
            Err(wire::ReadError::Framing(why)) => {
                out.fail_raw(0, "", &format!("unreadable message: {why}"));
                continue;
            }
        };
        let req = match Request::parse(&body) {
            Ok(r) => r,
            Err((seq, why)) => {
                out.fail_raw(seq, "", &why);
                continue;
            }
        };
        match req.command.as_str() {
            "initialize" => out.ok(&req, capabilities()),
            "launch" if program.is_some() => out.fail(&req, "a program is already launched"),
            "launch" => match program::Launch::from_request(&req) {
                Ok(launch) => program = Some(program::start(launch, req, out.clone(), shared.clone())),
                Err(why) => out.fail(&req, &why),
            },
            "attach" => out.fail(&req, "csp dap launches programs; it cannot attach to one"),
            // The program lives in this process: it ends with the adapter.
            "disconnect" | "terminate" => {
                out.ok(&req, json!({}));
                if req.command == "terminate" {
                    out.event("terminated", json!({}));
                }
                return 0;
            }
            "pause" => {
                shared.pause.store(true, Ordering::SeqCst);
                shared.attention.store(true, Ordering::SeqCst);
                out.ok(&req, json!({}));
            }
            "threads" if !shared.stopped.load(Ordering::SeqCst) => {
                let threads: Vec<Value> = (shared.threads.lock().unwrap_or_else(|e| e.into_inner()).iter())
                    .map(|(id, name)| json!({"id": id, "name": name}))
                    .collect();
                out.ok(&req, json!({"threads": threads}));
            }
            cmd if PROGRAM_COMMANDS.contains(&cmd) => match &program {
                None => out.fail(&req, "no program is running (send `launch` first)"),
                Some(_) if shared.ended.load(Ordering::SeqCst) => out.fail(&req, "the program has ended"),
                Some(_) if WHEN_STOPPED.contains(&cmd) && !shared.stopped.load(Ordering::SeqCst) => {
                    out.fail(&req, "the program is running: pause it first")
                }
                Some(tx) => match tx.send(req) {
                    Ok(()) => shared.attention.store(true, Ordering::SeqCst),
                    Err(unsent) => out.fail(&unsent.0, "the program has ended"),
                },
            },
            other => out.fail(&req, &format!("unknown command '{other}'")),
        }
    }
}

/// What the adapter supports (the `initialize` response).
fn capabilities() -> Value {
    json!({
        "supportsConfigurationDoneRequest": true,
        "supportsConditionalBreakpoints": true,
        "supportsHitConditionalBreakpoints": true,
        "supportsLogPoints": true,
        "supportsEvaluateForHovers": true,
        "supportsTerminateRequest": true,
        "supportsExceptionInfoRequest": true,
        "exceptionBreakpointFilters": [
            {"filter": "uncaught", "label": "Uncaught errors", "default": true,
             "description": "Stop where an error is thrown that no `try` of its fiber catches"},
            {"filter": "all", "label": "All errors", "default": false,
             "description": "Stop wherever an error is thrown"}
        ]
    })
}
