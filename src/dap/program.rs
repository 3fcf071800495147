//! The program's thread: `launch` compiles the program, `configurationDone`
//! starts it under the debugger (stop.rs), and its end is reported as the
//! `exited` and `terminated` events.

use super::stop::{Hook, Session};
use super::{Out, Request, Shared};
use crate::source::SourceFile;
use crate::vm::output::Sink;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

/// `launch`'s arguments.
pub struct Launch {
    pub program: String,
    pub args: Vec<String>,
    pub stop_on_entry: bool,
    /// VS Code's "Run Without Debugging": the program runs as `csp run` runs it.
    pub no_debug: bool,
    src: String,
}

impl Launch {
    /// The arguments of a `launch` request, the program's text read; or why not.
    pub fn from_request(req: &Request) -> Result<Launch, String> {
        let Some(program) = req.str("program") else {
            return Err("launch needs `program`: the path of the .csp file to debug".into());
        };
        let args = match req.args.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => {
                a.iter().filter_map(|s| s.as_str().map(String::from)).collect()
            }
            Some(_) => return Err("`args` must be a list of strings".into()),
        };
        if let Some(dir) = req.str("cwd") {
            std::env::set_current_dir(dir).map_err(|e| format!("cannot change to cwd {dir}: {e}"))?;
        }
        let src = std::fs::read_to_string(program).map_err(|e| format!("cannot read program {program}: {e}"))?;
        let stop_on_entry = req.args.get("stopOnEntry").and_then(Value::as_bool).unwrap_or(false);
        let no_debug = req.args.get("noDebug").and_then(Value::as_bool).unwrap_or(false);
        Ok(Launch { program: program.to_string(), args, stop_on_entry, no_debug, src })
    }
}

/// Starts the program's thread; requests for it go down the returned sender.
pub fn start(launch: Launch, req: Request, out: Out, shared: Arc<Shared>) -> Sender<Request> {
    let (tx, rx) = channel();
    shared.threads.lock().unwrap_or_else(|e| e.into_inner()).insert(1, "main fiber".into());
    // The VM's heap and values stay on this thread; a deep program needs the
    // same stack `csp run`'s main thread has.
    let spawned = std::thread::Builder::new().name("csp-dap-program".into()).stack_size(64 << 20).spawn(move || {
        let (o, sh) = (out.clone(), shared.clone());
        // A bug must not leave the client waiting: the session ends, saying so.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(launch, req, out, rx, shared)));
        if ran.is_err() {
            sh.ended.store(true, std::sync::atomic::Ordering::SeqCst);
            o.output("stderr", "csp dap: internal error (a bug): the program's thread panicked\n");
            o.event("exited", json!({"exitCode": 70}));
            o.event("terminated", json!({}));
        }
    });
    if let Err(e) = spawned {
        crate::err_println!("csp dap: cannot start the program's thread: {e}");
    }
    tx
}

fn run(launch: Launch, req: Request, out: Out, rx: Receiver<Request>, shared: Arc<Shared>) {
    let options = crate::embed::Options {
        caps: crate::embed::Caps::all(),
        stdout: true,
        args: launch.args.clone(),
        ..Default::default()
    };
    let mut vm = crate::embed::Runtime::new(options).into_vm();
    vm.set_program(&launch.program);
    let o = out.clone();
    vm.out.set_sink(Sink::Func(Box::new(move |b| o.output("stdout", &String::from_utf8_lossy(b)))));
    let o = out.clone();
    vm.out.set_err_sink(Box::new(move |b| o.output("stderr", &String::from_utf8_lossy(b))));
    let file = Rc::new(SourceFile::new(launch.program.as_str(), launch.src.as_str()));
    let proto = match crate::runner::compile(&mut vm, &file) {
        Ok(p) => p,
        Err(diags) => {
            let text = crate::diag::render_all(&diags, &file, false);
            out.fail(&req, &format!("{} does not compile", launch.program));
            out.output("stderr", &text);
            return end(&out, &rx, &shared, 2);
        }
    };
    out.ok(&req, json!({}));
    let session = Rc::new(RefCell::new(Session::new(out.clone(), rx, shared.clone())));
    let hook = Box::new(Hook(session.clone()));
    vm.debug = Some(Box::new(crate::vm::debug::Debug::new(hook, shared.attention.clone())));
    // Breakpoints and exception filters come now, until configurationDone.
    out.event("initialized", json!({}));
    session.borrow_mut().configure(&mut vm, proto, launch.stop_on_entry && !launch.no_debug);
    if launch.no_debug {
        // Without the debugger nothing stops.
        crate::vm::debug::detach(&mut vm);
    }
    let outcome = crate::sched::run_main(&mut vm, proto);
    let report = crate::runner::report(&vm, outcome, false);
    vm.out.flush();
    if !report.stderr.is_empty() {
        out.output("stderr", &report.stderr);
    }
    let s = session.borrow();
    end(&out, s.requests(), &shared, report.exit_code);
}

/// The program ended with `code`: the events that say so, and requests still
/// coming answered as failed.
fn end(out: &Out, rx: &Receiver<Request>, shared: &Shared, code: i32) {
    shared.ended.store(true, std::sync::atomic::Ordering::SeqCst);
    out.event("exited", json!({"exitCode": code}));
    out.event("terminated", json!({}));
    while let Ok(req) = rx.recv() {
        out.fail(&req, "the program has ended");
    }
}
