//! Size guards: a `Value` is copied into every register and container slot and an
//! `Op` is fetched on every instruction, so growing either slows everything down.

use std::mem::size_of;

#[test]
fn value_is_16_bytes() {
    assert_eq!(size_of::<csp::vm::Value>(), 16);
}

#[test]
fn op_fits_8_bytes() {
    assert!(size_of::<csp::bytecode::Op>() <= 8, "Op is {} bytes", size_of::<csp::bytecode::Op>());
}

/// A program may park a million fibers (benches/conc/skynet.csp): each pays for a
/// `Fiber` and a `Task`.
#[test]
fn fiber_and_task_stay_small() {
    let (fiber, task) = (size_of::<csp::vm::Fiber>(), size_of::<csp::sched::Task>());
    assert!(fiber <= 96, "Fiber is {fiber} bytes");
    assert!(task <= 80, "Task is {task} bytes");
}

/// Every heap slot is an `Obj`: kinds with bigger bodies are boxed.
#[test]
fn obj_is_32_bytes() {
    assert_eq!(size_of::<csp::vm::Obj>(), 32);
}
