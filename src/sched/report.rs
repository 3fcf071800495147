//! Reports: the deadlock report, the fiber chain added to failed fibers' traces,
//! `:fibers` lines, SIGQUIT's dump, and the names of `--trace` tracks.

use super::task::get as task;
use super::{FiberState, Wait};
use crate::bytecode::Site;
use crate::vm::{Fiber, Handle, Obj, Uncaught, Value, Vm};
use std::rc::Rc;

/// Appends to a failed fiber's error trace the chain of fibers that started it
/// (once: an error passed up through owners keeps its first chain).
pub(super) fn add_spawn_chain(vm: &mut Vm, e: Value, th: Handle) {
    // A chain of fibers each starting the next may be a million long (and
    // fail for memory): its ends are shown, as a deep stack's are.
    let chain = std::iter::successors(Some(th), |&h| task(&vm.heap, h).owner);
    let lines = crate::vm::error::ends_of(chain.clone().count(), chain, "fibers", |h| {
        let tk = task(&vm.heap, h);
        match tk.site {
            Some(site) => Rc::from(format!("fiber {} started at {}", tk.number, site.location())),
            None => Rc::from("main fiber"),
        }
    });
    if let Value::Obj(h) = e {
        if let Obj::Error(er) = vm.heap.get_mut(h) {
            if !er.trace.last().is_some_and(|l| l.starts_with("main fiber") || l.starts_with("fiber ")) {
                er.trace.extend(lines);
            }
        }
    }
}

pub(super) fn uncaught_at_top(vm: &mut Vm, e: Value) -> Uncaught {
    let (trace, origin) = match e {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Error(er) => (er.trace.clone(), er.origin),
            _ => (Vec::new(), None),
        },
        _ => (Vec::new(), None),
    };
    let (file, span) = match origin {
        Some(site) => (site.file().clone(), site.span()),
        None => (
            vm.protos.last().map(|p| p.file.clone()).unwrap_or_else(|| Rc::new(crate::source::SourceFile::new("", ""))),
            crate::source::Span::default(),
        ),
    };
    Uncaught { value: e, span, file, trace }
}

/// The deadlock report: every parked fiber, what it waits on, where, and who started it.
pub(super) fn deadlock_report(vm: &Vm) -> String {
    let mut out = String::from("deadlock: no fiber can make progress\n");
    let mut holders = Holders::default();
    for (f, s) in fibers(vm) {
        let Some(w) = &s.parked else { continue };
        out.push_str(&format!("  {}\n", blocked_line(vm, f, s, w, &mut holders)));
        started_chain(vm, s, &mut out);
    }
    out
}

/// "started at" lines: where the fiber's `go` is, then its starters'.
fn started_chain(vm: &Vm, s: &FiberState, out: &mut String) {
    let mut t = s.task;
    let mut first = true;
    while let Some(th) = t {
        let tk = task(&vm.heap, th);
        if let Some(site) = tk.site {
            let by = if first { "started at" } else { "  by a fiber started at" };
            out.push_str(&format!("    {by} {}\n", site.location()));
        }
        first = false;
        t = tk.owner;
    }
}

/// SIGQUIT's listing of every fiber: its state (what it is blocked on, where),
/// its stack, and where it was started; then fibers not started yet.
pub(super) fn fiber_dump(vm: &Vm) -> String {
    let mut out = String::from("SIGQUIT: every fiber\n");
    let mut holders = Holders::default();
    for (f, s) in fibers(vm) {
        out.push_str(&format!("  {}\n", state_line(vm, f, s, &mut holders)));
        for frame in crate::vm::error::capped_trace(f) {
            out.push_str(&format!("    at {frame}\n"));
        }
        started_chain(vm, s, &mut out);
    }
    for (n, site) in super::start::not_started(vm) {
        out.push_str(&format!("  fiber {n} not started yet (go at {})\n", site.location()));
    }
    out
}

/// Fibers that exist and are not running now, with their states.
fn fibers(vm: &Vm) -> impl Iterator<Item = (&Fiber, &FiberState)> + '_ {
    vm.sched.fibers.slots.iter().filter_map(|s| Some((s.fiber.as_deref()?, &s.state)))
}

/// Names of the globals holding object `h`.
fn globals_holding(vm: &Vm, h: Handle) -> impl Iterator<Item = &str> + '_ {
    let holds = move |g: u32| matches!(vm.globals[g as usize], Value::Obj(x) if x == h);
    vm.global_names.iter().filter(move |(_, &g)| holds(g)).map(|(name, _)| &**name)
}

/// `file:line:col` of a site, or nothing.
fn location(site: Option<Site>) -> String {
    site.map_or(String::new(), |s| s.location())
}

/// The fibers and globals holding each channel, found once per report.
type Holders = std::collections::HashMap<Handle, Vec<(*const Fiber, String)>>;

/// Holders of a channel named in a blocked fiber's line.
const HOLDERS_SHOWN: usize = 4;

/// `"fiber N blocked on OPERATION at file:line:col"`.
fn blocked_line(vm: &Vm, f: &Fiber, s: &FiberState, w: &Wait, holders: &mut Holders) -> String {
    let who = fiber_name(vm, s);
    let at = location(f.current_site());
    let what = match w {
        Wait::Io => match vm.sched.events.io.as_ref().and_then(|p| p.stall_reason(s.gen)) {
            Some(why) => why,
            None => w.describe().to_string(),
        },
        Wait::Recv(h) | Wait::Send(h) => {
            let all = holders.entry(*h).or_insert_with(|| {
                let mut v: Vec<(*const Fiber, String)> = fibers(vm)
                    .filter(|(o, os)| o.holds(&vm.heap, *h) && os.task.is_some())
                    .map(|(o, os)| (o as *const Fiber, fiber_name(vm, os)))
                    .collect();
                v.extend(globals_holding(vm, *h).map(|name| (std::ptr::null(), format!("global `{name}`"))));
                v
            });
            // Named up to a few: thousands of fibers on one channel would
            // otherwise make the report quadratic in size.
            let others = all.len() - usize::from(f.holds(&vm.heap, *h) && s.task.is_some());
            let shown: Vec<&str> = all
                .iter()
                .filter(|(o, _)| !std::ptr::eq(*o, f))
                .take(HOLDERS_SHOWN)
                .map(|(_, name)| name.as_str())
                .collect();
            let mut list = shown.join(", ");
            if others > HOLDERS_SHOWN {
                list.push_str(&format!(" and {} more", others - HOLDERS_SHOWN));
            }
            let held = if others == 0 { String::new() } else { format!(" (held by {list})") };
            format!("{} {}{held}", w.describe(), crate::display::repr(&vm.heap, Value::Obj(*h)))
        }
        Wait::Lock(m) => {
            let holder = match vm.heap.get(*m) {
                Obj::Mutex(mx) => mx.holder(),
                _ => None,
            };
            let held =
                holder.map(|id| format!(" held by {}", fiber_name(vm, vm.sched.fibers.state(id)))).unwrap_or_default();
            format!("lock{held}")
        }
        Wait::Select => {
            let chans = s.extra.as_ref().map_or(&[][..], |x| &x.select[..]);
            let shown: Vec<String> = chans
                .iter()
                .map(|&h| {
                    let names: Vec<String> = globals_holding(vm, h).map(|n| format!("`{n}`")).collect();
                    let named = if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) };
                    format!("{}{named}", crate::display::repr(&vm.heap, Value::Obj(h)))
                })
                .collect();
            match shown.is_empty() {
                true => "select on nil channels".to_string(),
                false => format!("select on {}", shown.join(", ")),
            }
        }
        _ => w.describe().to_string(),
    };
    // Another isolate's fibers, indented below (a stalled job's reason).
    match what.split_once('\n') {
        Some((head, rest)) => format!("{who} blocked on {head} at {at}, where\n{rest}"),
        None => format!("{who} blocked on {what} at {at}"),
    }
}

/// "fiber N blocked on ..." or "fiber N ready at ...".
fn state_line(vm: &Vm, f: &Fiber, s: &FiberState, holders: &mut Holders) -> String {
    match &s.parked {
        Some(w) => blocked_line(vm, f, s, w, holders),
        None => format!("{} ready at {}", fiber_name(vm, s), location(f.next_site())),
    }
}

/// One line per fiber not running now, started or not (the REPL's `:fibers`).
pub(super) fn fiber_lines(vm: &Vm) -> Vec<String> {
    let mut holders = Holders::default();
    fibers(vm)
        .map(|(f, s)| state_line(vm, f, s, &mut holders))
        .chain(
            super::start::not_started(vm)
                .map(|(n, site)| format!("fiber {n} not started yet (go at {})", site.location())),
        )
        .collect()
}

fn fiber_name(vm: &Vm, s: &FiberState) -> String {
    fiber_called(s.task.map_or(0, |t| task(&vm.heap, t).number))
}

fn fiber_called(number: u32) -> String {
    match number {
        0 => "main fiber".to_string(),
        n => format!("fiber {n}"),
    }
}

/// A fiber's track in `--trace`: `main`, or `fiber 3 (go worker at main.csp:12:5)`
/// for task `th` started by a `go` of `callee`.
pub(super) fn fiber_title(vm: &Vm, th: Handle, callee: &str) -> String {
    let tk = task(&vm.heap, th);
    match tk.site {
        Some(site) => format!("{} (go {callee} at {})", fiber_called(tk.number), site.location()),
        None => "main".to_string(),
    }
}

/// The report of a fiber that waits on its own task at `at`.
pub(super) fn self_wait(vm: &Vm, at: Site) -> String {
    let number = vm.sched.fibers.state(vm.sched.fibers.current).task.map_or(0, |t| task(&vm.heap, t).number);
    format!("deadlock: fiber {number} waits on its own task at {}\n", at.location())
}
