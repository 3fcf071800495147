//! `evaluate`, conditions and log points: an expression compiled as a small
//! function whose parameters are the frame's visible names (their values
//! copied in; globals the compiler finds itself), run on the stopped VM with
//! a budget. Assignments to a frame's names do not reach the frame.

use crate::source::SourceFile;
use crate::vm::exec::{self, Halt};
use crate::vm::{Fiber, Value, Vm};
use std::rc::Rc;

/// Back-edges and calls an expression may take.
const BUDGET: u32 = 100_000;

/// The value of `expr` with `names` bound; an error's message otherwise.
pub fn evaluate(vm: &mut Vm, names: Vec<(String, Value)>, expr: &str) -> Result<Value, String> {
    set_evaluating(vm, true);
    let r = evaluate_now(vm, names, expr);
    set_evaluating(vm, false);
    r
}

fn set_evaluating(vm: &mut Vm, on: bool) {
    if let Some(d) = vm.debug.as_mut() {
        d.evaluating = on;
    }
}

fn evaluate_now(vm: &mut Vm, names: Vec<(String, Value)>, expr: &str) -> Result<Value, String> {
    if expr.trim().is_empty() {
        return Err("nothing to evaluate".into());
    }
    let params: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    let src = format!("(fn({}) {{\nreturn ({expr}\n)\n}})", params.join(", "));
    let proto = match vm.debug.as_ref().and_then(|d| d.compiled.get(&src).copied()) {
        Some(p) => p,
        None => {
            let file = Rc::new(SourceFile::new("<evaluate>", src.as_str()));
            let p = crate::runner::compile_entry(vm, &file).map_err(|(_, diags)| {
                diags.first().map_or_else(|| "does not compile".to_string(), |d| d.message.clone())
            })?;
            if let Some(d) = vm.debug.as_mut() {
                d.compiled.insert(src, p);
            }
            p
        }
    };
    let function = run(vm, Fiber::for_main(proto))?;
    let mut call = vec![function];
    call.extend(names.iter().map(|(_, v)| *v));
    let site = crate::bytecode::Site { proto, pc: 0 };
    run(vm, Fiber::for_call(&call, false, site, 0, false))
}

/// Runs a fiber of the debugger's to its end, which must come within the budget.
fn run(vm: &mut Vm, mut fiber: Fiber) -> Result<Value, String> {
    match exec::run(vm, &mut fiber, BUDGET) {
        Halt::Done(v) => Ok(v),
        Halt::Error(u) => Err(super::inspect::error_message(vm, u.value)),
        Halt::Preempted | Halt::Yielded => Err("the expression took too long".into()),
        Halt::Blocked | Halt::Deadlock(_) => {
            Err("the expression blocked (it cannot wait while the program is stopped)".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::evaluate;
    use crate::vm::debug::{Debug, Debugger};
    use crate::vm::exec::Halt;
    use crate::vm::{Fiber, Value, Vm};

    struct Quiet;
    impl Debugger for Quiet {
        fn trapped(&mut self, _: &mut Vm, _: &mut Fiber, _: crate::bytecode::Site) {}
        fn thrown(&mut self, _: &mut Vm, _: &mut Fiber, _: Value, _: bool) {}
        fn slice_ended(&mut self, _: &mut Vm, _: &mut Fiber, _: &Halt) {}
        fn idle(&mut self, _: &mut Vm) {}
    }

    /// A condition evaluated at every hit is compiled once.
    #[test]
    fn an_expression_is_compiled_once() {
        let options = crate::embed::Options { caps: crate::embed::Caps::all(), ..Default::default() };
        let mut vm = crate::embed::Runtime::new(options).into_vm();
        vm.debug = Some(Box::new(Debug::new(Box::new(Quiet), Default::default())));
        let names = |i| vec![("i".to_string(), Value::Int(i))];
        assert!(matches!(evaluate(&mut vm, names(3), "i * 2"), Ok(Value::Int(6))));
        let protos = vm.protos.len();
        for i in 0..5 {
            assert!(matches!(evaluate(&mut vm, names(i), "i * 2"), Ok(Value::Int(n)) if n == i * 2));
        }
        assert_eq!(vm.protos.len(), protos, "no proto compiled again");
        assert!(evaluate(&mut vm, names(1), "i +").is_err());
    }
}
