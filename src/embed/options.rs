//! `Options`: how a runtime is set up. The CLI's flags, the tools and an
//! embedding host all describe a runtime this way, so limits, capabilities and
//! seeds mean the same wherever csp starts.

use super::caps::{self, Caps};
use crate::vm::output::Sink;
use crate::vm::{Rng, Vm};
use std::sync::Arc;
use std::time::Duration;

/// How a runtime is set up. The default is what `csp run` gives a program,
/// minus the outside world: no files, network, processes or environment.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The heap's limit in bytes (`--max-memory`); None: no limit.
    pub max_memory: Option<usize>,
    /// Most live fibers (`--max-fibers`).
    pub max_fibers: Option<usize>,
    /// Wall time after which the code an `eval`, `call`, `start` or
    /// `run_program` runs is cancelled (`--timeout`), counted for each.
    pub timeout: Option<Duration>,
    /// Instructions (roughly) the runtime may run in all before its code is
    /// stopped with a `budget` error: fuel, for untrusted scripts.
    pub fuel: Option<u64>,
    pub caps: Caps,
    /// Where `print` goes: the process's stdout, or (false) kept for `Runtime::take_output`.
    pub stdout: bool,
    /// How long cancelled fibers may clean up when the program ends (`--grace`).
    pub grace: Option<Duration>,
    /// How long a fiber runs before the others get a turn (`--slice-us`).
    pub slice: Option<Duration>,
    /// Seeds `random` and `select`'s choice among ready cases, so runs repeat (`--seed`).
    pub seed: Option<u64>,
    /// The schedule to explore (`--explore-seed`); `random` is fixed too, so a replay is the same run.
    pub explore: Option<u64>,
    /// Packages only from the cache, never fetched (`--offline`).
    pub offline: bool,
    /// The script's arguments (`os.args`).
    pub args: Vec<String>,
    /// Count what runs (`--coverage`); `Some(true)` counts std's modules too (`--coverage-std`).
    pub coverage: Option<bool>,
    /// A built executable's modules (`csp build`): imports read them, not files.
    pub bundle: Option<Arc<crate::bundle::Bundle>>,
    /// Worker isolates for `std/isolate` (`--isolates`); None: one per core.
    pub isolates: Option<usize>,
}

impl Options {
    /// Sets `vm` up as these options say (the VM is fresh, with its prelude).
    pub(super) fn apply(&self, vm: &mut Vm) {
        caps::apply(vm, &self.caps);
        if let Some(m) = self.max_memory {
            vm.heap.set_limit(m);
        }
        // `--max-memory` is one budget for every isolate of the runtime.
        let memory = crate::vm::budget::Budget::new(vm.heap.limit);
        vm.heap.share_limit(memory.join());
        // `--max-fibers` counts the fibers of every isolate of the runtime.
        let fibers = self.max_fibers.map(|n| {
            vm.sched.set_max_fibers(n);
            let count = Arc::new(crate::sched::FiberCount::default());
            vm.sched.share_fiber_count(count.clone());
            count
        });
        if let Some(ticks) = self.fuel {
            vm.sched.set_budget(crate::sched::Budget { ticks, time: Duration::MAX });
        }
        // Kept output is kept in one buffer for every isolate of the runtime.
        let kept = (!self.stdout).then(|| Arc::new(std::sync::Mutex::new(Vec::new())));
        if let Some(k) = &kept {
            vm.out.set_sink(Sink::Shared(k.clone()));
        }
        if let Some(grace) = self.grace {
            vm.sched.set_grace(grace);
        }
        if let Some(slice) = self.slice {
            vm.sched.set_slice(slice);
        }
        // Exploring fixes `random` too, so that a schedule's replay is the same run.
        match (self.seed, self.explore) {
            (Some(seed), _) => {
                vm.rng = Rng::new(seed);
                vm.select_rng = Rng::new(seed);
            }
            (None, Some(_)) => vm.rng = Rng::new(Rng::DEFAULT_SEED),
            (None, None) => {}
        }
        if let Some(s) = self.explore {
            vm.sched.set_explore(s);
        }
        vm.loader.offline = self.offline;
        vm.args.clone_from(&self.args);
        if let Some(include_std) = self.coverage {
            vm.coverage = Some(Box::new(crate::coverage::Counters::new(include_std)));
        }
        vm.loader.bundle.clone_from(&self.bundle);
        // A worker isolate is made as this runtime was, on its own thread;
        // `--timeout` is the main isolate's to enforce.
        let worker = Options { timeout: None, ..self.clone() };
        let make = move || {
            let mut vm = super::Runtime::new(worker.clone()).into_vm();
            if let Some(k) = &kept {
                vm.out.set_sink(Sink::Shared(k.clone()));
            }
            if let Some(c) = &fibers {
                vm.sched.share_fiber_count(c.clone());
            }
            vm.heap.share_limit(memory.join());
            vm
        };
        crate::isolate::configure(vm, self.isolates, Arc::new(make));
    }
}
