//! Isolates (docs/isolates.md): csp on every core. A worker isolate is a VM
//! of its own on a thread of its own; values cross between isolates as
//! copies (`clone.rs`), functions by identity (`units.rs`). The pool of
//! workers (`pool.rs`, `worker.rs`) starts on the first use of
//! `std/isolate`, whose natives are in `natives/isolate.rs`.

pub mod clone;
#[cfg(test)]
mod clone_tests;
pub(crate) mod moved;
mod others;
pub mod pool;
pub mod units;
pub mod worker;

use crate::vm::Vm;
use pool::{Factory, Pool};
use std::sync::Arc;

/// An isolate's part in `std/isolate`, kept in `Vm::isolate`.
#[derive(Default)]
pub struct Local {
    /// The pool's size (`--isolates`, `CSP_ISOLATES`); None: the cores.
    pub size: Option<usize>,
    /// How a worker's VM is made.
    pub factory: Option<Factory>,
    /// The pool every isolate shares, once started.
    pub pool: Option<Arc<Pool>>,
    /// In a worker: its index in the pool.
    pub worker: Option<usize>,
    pub compiled: units::Compiled,
    /// The texts of the scripts this isolate has sent (units.rs).
    pub texts: units::Texts,
}

/// This isolate's `Local`, made on first use.
pub fn local(vm: &mut Vm) -> &mut Local {
    if !vm.isolate.as_ref().is_some_and(|b| b.is::<Local>()) {
        vm.isolate = Some(Box::new(Local::default()));
    }
    vm.isolate.as_mut().and_then(|b| b.downcast_mut::<Local>()).expect("made above")
}

/// This isolate's `Local`, if it has one yet.
pub fn local_ref(vm: &Vm) -> Option<&Local> {
    vm.isolate.as_ref().and_then(|b| b.downcast_ref::<Local>())
}

/// The number of cores, the pool's default size.
pub fn default_size() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Sets how many workers the pool has and how a worker's VM is made (the
/// runtime's own options: `embed::Options::apply`).
pub fn configure(vm: &mut Vm, size: Option<usize>, factory: Factory) {
    let local = local(vm);
    local.size = size;
    local.factory = Some(factory);
}

/// The pool, started now if it is not yet.
pub fn pool(vm: &mut Vm) -> Result<Arc<Pool>, String> {
    let exploring = vm.sched.exploring();
    let trace = crate::sched::TraceFile::of(vm);
    let local = local(vm);
    if let Some(p) = &local.pool {
        return Ok(p.clone());
    }
    let Some(make) = local.factory.clone() else {
        return Err("this runtime cannot start isolates (it was not made by Runtime::new)".into());
    };
    let size = local.size.unwrap_or_else(default_size).max(1);
    // `--isolates 1`: the worker runs on this thread; exploring, every
    // worker does, so that one schedule decides how they interleave.
    let here = size == 1 || exploring;
    let p = Pool::start(size, &make, !here, trace.as_ref().map(|t| t.share()));
    local.pool = Some(p.clone());
    // Only the main isolate starts the pool; it ends it with the program.
    let ending = p.clone();
    vm.sched.on_end(Box::new(move |grace| ending.end(grace)));
    crate::sched::shared::answer_asks(vm);
    if !here {
        crate::sched::others::set(vm, Box::new(others::Away(p.clone())));
        return Ok(p);
    }
    let mut workers = Vec::new();
    for i in 0..size {
        // On this thread, each records into this isolate's buffer.
        let mut worker = worker::Worker::new(&p, i, &make, trace.clone());
        vm.sched.explore_alongside(&mut worker.vm.sched);
        let fd =
            crate::sched::session::reactor_fd(&mut worker.vm).map_err(|e| format!("cannot start an isolate: {e}"))?;
        crate::sched::others::watch(vm, fd).map_err(|e| format!("cannot start an isolate: {e}"))?;
        workers.push(worker);
    }
    let order = vm.sched.explore_draw();
    crate::sched::others::set(vm, Box::new(others::Here::new(workers, order)));
    Ok(p)
}

/// The pool's size, without starting it.
pub fn count(vm: &mut Vm) -> usize {
    let local = local(vm);
    local.pool.as_ref().map_or_else(|| local.size.unwrap_or_else(default_size).max(1), |p| p.size())
}
