//! `os.signals(...names)`: a channel that receives the name of each named
//! signal as it arrives. It reaches the scheduler through `sched::ops` only.

use crate::sched::ops;
use crate::vm::ErrorKind;
use crate::vm::{err, Res, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_hidden("os.signals", crate::vm::NativeFn::Value(signals));
}

fn signals(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    super::args::arity("os.signals", args, 1, usize::MAX)?;
    if crate::isolate::local(vm).worker.is_some() {
        // Signals are the process's: the main isolate takes them, and may
        // send the channel to a worker (docs/isolates.md).
        return err(ErrorKind::Value, "os.signals() works in the main isolate only: send its channel to a worker");
    }
    let mut names = Vec::with_capacity(args.len());
    for &a in args {
        let Some(s) = vm.heap.as_str(a) else {
            return err(ErrorKind::Type, format!("os.signals() needs signal names, not {}", vm.heap.type_name(a)));
        };
        let name = s.s.to_string();
        if !ops::signal_names().any(|n| n == name) {
            let known: Vec<&str> = ops::signal_names().collect();
            return err(
                ErrorKind::Value,
                format!("os.signals() cannot handle {name:?}: it takes {}", known.join(", ")),
            );
        }
        names.push(name);
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    ops::signal_channel(vm, &names)
}
