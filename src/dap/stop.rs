//! The debugger on the program's thread: deciding whether a trap, a throw or
//! a pause stops the program, and while stopped, answering requests with the
//! whole program held (no fiber runs, no timer fires).

use super::breakpoints::{Breakpoints, Hit};
use super::inspect::View;
use super::step::{Kind, Stepping};
use super::{Out, Request, Shared};
use crate::bytecode::{ProtoRef, Site};
use crate::sched::debug as sched;
use crate::vm::debug::Debugger;
use crate::vm::exec::Halt;
use crate::vm::{Fiber, Value, Vm};
use serde_json::{json, Value as Json};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Instant;

/// The debugger's state.
pub struct Session {
    out: Out,
    rx: Receiver<Request>,
    shared: Arc<Shared>,
    bps: Breakpoints,
    /// `setExceptionBreakpoints`' filters.
    uncaught: bool,
    all: bool,
    step: Stepping,
    /// The error of an `exception` stop, for `exceptionInfo`.
    exception: Option<Json>,
    /// The breakpoint a `breakpoint` stop is at.
    hit: Option<i64>,
}

/// How a stopped program goes on.
enum Resume {
    Continue,
    Step(Kind, u32),
}

/// The debugger as the VM calls it.
pub struct Hook(pub Rc<RefCell<Session>>);

impl Debugger for Hook {
    fn trapped(&mut self, vm: &mut Vm, fiber: &mut Fiber, site: Site) {
        self.0.borrow_mut().trapped(vm, fiber, site);
    }
    fn thrown(&mut self, vm: &mut Vm, fiber: &mut Fiber, value: Value, caught: bool) {
        self.0.borrow_mut().thrown(vm, fiber, value, caught);
    }
    fn slice_ended(&mut self, vm: &mut Vm, fiber: &mut Fiber, halt: &Halt) {
        self.0.borrow_mut().slice_ended(vm, fiber, halt);
    }
    fn idle(&mut self, vm: &mut Vm) {
        self.0.borrow_mut().idle(vm);
    }
}

impl Session {
    pub fn new(out: Out, rx: Receiver<Request>, shared: Arc<Shared>) -> Session {
        let (uncaught, all) = (true, false);
        let (bps, step) = (Breakpoints::default(), Stepping::default());
        Session { out, rx, shared, bps, uncaught, all, step, exception: None, hit: None }
    }

    pub fn requests(&self) -> &Receiver<Request> {
        &self.rx
    }

    /// Takes requests until `configurationDone`; then the program may start.
    pub fn configure(&mut self, vm: &mut Vm, main: ProtoRef, stop_on_entry: bool) {
        while let Ok(req) = self.rx.recv() {
            match req.command.as_str() {
                "configurationDone" => {
                    self.out.ok(&req, json!({}));
                    break;
                }
                _ if self.configuration(vm, &req) => {}
                _ => self.out.fail(&req, "the program has not started (send configurationDone)"),
            }
        }
        if stop_on_entry {
            self.step.entry(vm, Site { proto: main, pc: 0 });
        }
    }

    /// Answers a request that may come whether or not the program is stopped;
    /// false if it is not one.
    fn configuration(&mut self, vm: &mut Vm, req: &Request) -> bool {
        match req.command.as_str() {
            "setBreakpoints" => match self.bps.set(vm, req) {
                Ok(body) => self.out.ok(req, body),
                Err(why) => self.out.fail(req, &why),
            },
            "setExceptionBreakpoints" => {
                let filters = req.args.get("filters").and_then(Json::as_array).cloned().unwrap_or_default();
                let on = |name: &str| filters.iter().any(|f| f.as_str() == Some(name));
                (self.uncaught, self.all) = (on("uncaught"), on("all"));
                self.out.ok(req, json!({}));
            }
            _ => return false,
        }
        true
    }

    fn trapped(&mut self, vm: &mut Vm, fiber: &mut Fiber, site: Site) {
        let id = vm.sched.running();
        if let Some(reason) = self.step.done(vm, fiber, id, site) {
            return self.stop(vm, Some(fiber), reason, None, true);
        }
        match self.bps.hit(vm, fiber, site) {
            Hit::Stop(id) => {
                self.hit = Some(id);
                self.stop(vm, Some(fiber), "breakpoint", None, true)
            }
            Hit::Log(text) => self.out.output("console", &format!("{text}\n")),
            Hit::Pass => {}
        }
    }

    fn thrown(&mut self, vm: &mut Vm, fiber: &mut Fiber, value: Value, caught: bool) {
        // A cancelled fiber unwinds by a `cancelled` error: no failure (the
        // program's end cancels fibers left waiting).
        let cancelled = crate::vm::error::is_kind(vm, value, crate::vm::ErrorKind::Cancelled);
        if !cancelled && (self.all || (self.uncaught && !caught)) {
            let text = super::inspect::error_message(vm, value);
            let kind = super::inspect::error_kind(vm, value);
            self.exception = Some(json!({"exceptionId": kind, "description": text,
                "breakMode": if caught { "always" } else { "unhandled" }}));
            self.stop(vm, Some(fiber), "exception", Some(text), false);
        }
    }

    /// Takes requests that came while the program ran (breakpoints); false
    /// if none came and no pause is asked.
    fn attend(&mut self, vm: &mut Vm) -> bool {
        // A plain load first: this runs at every slice's end.
        if !self.shared.attention.load(Ordering::Relaxed) || !self.shared.attention.swap(false, Ordering::SeqCst) {
            return false;
        }
        while let Ok(req) = self.rx.try_recv() {
            if !self.configuration(vm, &req) {
                self.out.fail(&req, "the program is running: pause it first");
            }
        }
        true
    }

    /// `thread` events: a fiber is announced when its first slice ends, and
    /// its end when its last does (one that ends within its first is never
    /// seen; `Debug::seen` keeps which are).
    fn announce(&mut self, vm: &mut Vm, id: u32, ended: bool) {
        if !vm.debug.as_mut().is_some_and(|d| d.note_fiber(id, !ended)) {
            return;
        }
        let mut threads = self.shared.threads.lock().unwrap_or_else(|e| e.into_inner());
        match ended {
            true => threads.remove(&(id as i64 + 1)),
            false => threads.insert(id as i64 + 1, sched::fiber_name(vm, id)),
        };
        drop(threads);
        let reason = if ended { "exited" } else { "started" };
        self.out.event("thread", json!({"reason": reason, "threadId": id + 1}));
    }

    /// Every fiber waits: a pause stops the program in the first one.
    fn idle(&mut self, vm: &mut Vm) {
        if self.attend(vm) && self.shared.pause.swap(false, Ordering::SeqCst) {
            self.stop(vm, None, "pause", None, false);
        }
    }

    fn slice_ended(&mut self, vm: &mut Vm, fiber: &mut Fiber, halt: &Halt) {
        self.announce(vm, vm.sched.running(), matches!(halt, Halt::Done(_) | Halt::Error(_)));
        // The stepping fiber ended: the program runs on without the step's traps.
        if matches!(halt, Halt::Done(_) | Halt::Error(_)) && self.step.fiber() == Some(vm.sched.running()) {
            self.step.clear(vm, &self.bps);
        }
        if !self.attend(vm) {
            return;
        }
        // A fiber that finished has nothing to show: the pause waits for the next.
        let exact = match halt {
            // Preempted at a back-edge or call: the saved pc is the next to run.
            Halt::Preempted | Halt::Yielded => true,
            // Parked: the saved pc is past the instruction it waits in.
            Halt::Blocked => false,
            Halt::Done(_) | Halt::Error(_) | Halt::Deadlock(_) => {
                self.shared.attention.store(self.shared.pause.load(Ordering::SeqCst), Ordering::SeqCst);
                return;
            }
        };
        if self.shared.pause.swap(false, Ordering::SeqCst) {
            self.stop(vm, Some(fiber), "pause", None, exact);
        }
    }

    /// Stops the program for `reason` in `fiber` (its top pc `exact`ly on
    /// the instruction, or past it) and answers requests until one resumes it.
    /// `fiber` is the running one (None: every fiber waits; the first is shown).
    fn stop(&mut self, vm: &mut Vm, fiber: Option<&mut Fiber>, reason: &str, text: Option<String>, exact: bool) {
        self.step.clear(vm, &self.bps);
        // What the program printed so far shows before the stop.
        vm.out.flush();
        self.shared.pause.store(false, Ordering::SeqCst);
        let id = match fiber {
            Some(_) => vm.sched.running(),
            None => sched::fibers(vm).iter().map(|f| f.id).min().unwrap_or(0),
        };
        let mut view = View::new(id, exact);
        let threads = view.threads(vm);
        let named = threads.iter().filter_map(|t| Some((t["id"].as_i64()?, t["name"].as_str()?.to_string())));
        *self.shared.threads.lock().unwrap_or_else(|e| e.into_inner()) = named.collect();
        self.shared.stopped.store(true, Ordering::SeqCst);
        let mut body = json!({"reason": reason, "threadId": id + 1, "allThreadsStopped": true});
        if let Some(id) = self.hit.take() {
            body["hitBreakpointIds"] = json!([id]);
        }
        if let Some(t) = text {
            body["description"] = json!(format!("Error: {t}"));
            body["text"] = json!(t);
        }
        self.out.event("stopped", body);
        let began = Instant::now();
        let resume = loop {
            let Ok(req) = self.rx.recv() else { break Resume::Continue };
            if let Some(r) = self.stopped_request(vm, fiber.as_deref(), &mut view, &req) {
                break r;
            }
        };
        self.shared.stopped.store(false, Ordering::SeqCst);
        self.exception = None;
        if let Resume::Step(kind, thread) = resume {
            self.step.start(vm, kind, fiber.as_deref(), id, thread, exact);
        }
        sched::postpone_clock(vm, began.elapsed());
    }

    /// Answers a request while stopped; how the program goes on if it says.
    fn stopped_request(
        &mut self,
        vm: &mut Vm,
        fiber: Option<&Fiber>,
        view: &mut View,
        req: &Request,
    ) -> Option<Resume> {
        let thread = req.int("threadId").and_then(super::inspect::index).map_or(view.stopped, |t| t as u32);
        let resume = match req.command.as_str() {
            "continue" => Resume::Continue,
            "next" => Resume::Step(Kind::Over, thread),
            "stepIn" => Resume::Step(Kind::In, thread),
            "stepOut" => Resume::Step(Kind::Out, thread),
            "exceptionInfo" => {
                match &self.exception {
                    Some(info) => self.out.ok(req, info.clone()),
                    None => self.out.fail(req, "the program did not stop for an error"),
                }
                return None;
            }
            _ => {
                if !self.configuration(vm, req) {
                    match view.answer(vm, fiber, req) {
                        Ok(body) => self.out.ok(req, body),
                        Err(why) => self.out.fail(req, &why),
                    }
                }
                return None;
            }
        };
        let body = if req.command == "continue" { json!({"allThreadsContinued": true}) } else { json!({}) };
        self.out.ok(req, body);
        Some(resume)
    }
}
