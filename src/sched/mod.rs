//! Runs fibers. For now one fiber (the main script) runs in slices, with the
//! collector between slices; later the run queue, timers and channels live here.

use crate::vm::exec::{self, Halt};
use crate::vm::fiber::Uncaught;
use crate::vm::{gc, Fiber, Value, Vm};
use std::rc::Rc;

/// Back-edges and calls a fiber runs before returning to the scheduler.
pub const SLICE_BUDGET: u32 = 10_000;

/// Runs `proto` as the main fiber to completion.
pub fn run_main(vm: &mut Vm, proto: Rc<crate::bytecode::Proto>) -> Result<Value, Box<Uncaught>> {
    let mut fiber = Fiber::for_main(proto);
    loop {
        match exec::run(vm, &mut fiber, SLICE_BUDGET) {
            Halt::Done(v) => return Ok(v),
            Halt::Error(u) => return Err(u),
            Halt::Yield => {
                if vm.heap.should_collect() {
                    gc::collect(vm, &[&fiber]);
                }
            }
        }
    }
}
