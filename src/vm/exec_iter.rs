//! `for x in` over the sources whose next item may have to be waited for:
//! a coroutine (resumed), a channel (received from) and a stream (read a line
//! from). Out of the dispatch loop; lists, maps, strings and ranges stay in it.

use super::builtin::Ret;
use super::call::Called;
use super::coroutine;
use super::fiber::Fiber;
use super::object::Obj;
use super::value::{Handle, Value};
use super::{Res, Vm};
use crate::sched::ops;

/// What getting the next item did.
pub(super) enum IterStep {
    /// The item is in the loop variable.
    Item,
    /// The source is exhausted: leave the loop.
    End,
    /// A coroutine's frame was entered: the loop continues in it.
    Entered,
    /// The fiber parked; it is woken with the item (or runs the instruction again).
    Blocked,
}

/// The next item of coroutine, channel or stream `h` into `stack[slot]`.
/// The caller has saved its pc; `target` is where the loop ends.
#[inline(never)]
pub(super) fn next_of_source(vm: &mut Vm, fiber: &mut Fiber, h: Handle, slot: usize, target: u32) -> Res<IterStep> {
    match vm.heap.get(h) {
        Obj::Coroutine(c) => {
            if c.state == super::fiber::CoState::Done {
                return Ok(IterStep::End);
            }
            let entry = coroutine::Entry::Resume(Value::Nil);
            // A builtin body runs in this frame: it may block, or end the
            // loop at once (see `coroutine::builtin_body`).
            Ok(match coroutine::enter(vm, fiber, h, entry, slot, Some(target))? {
                Called::Blocked => IterStep::Blocked,
                _ => IterStep::Entered,
            })
        }
        Obj::Chan(_) => Ok(match ops::recv(vm, Value::Obj(h))? {
            Some((v, true)) => {
                fiber.put(slot, &v);
                IterStep::Item
            }
            Some((_, false)) => IterStep::End,
            None => IterStep::Blocked,
        }),
        Obj::Host(o) => {
            let it = o.class().next.as_ref().expect("iter_start lets only iterable host objects in");
            if let Some(v) = (it.at_hand)(vm, h, fiber, slot) {
                fiber.put(slot, &v);
                return Ok(IterStep::Item);
            }
            // An item, nil at the end, or a wait (woken with Retry, which runs
            // the instruction again).
            match (it.next)(vm, h, fiber, slot)? {
                Ret::Value(Value::Nil) => Ok(IterStep::End),
                Ret::Value(v) => {
                    fiber.put(slot, &v);
                    Ok(IterStep::Item)
                }
                Ret::Block(b) => {
                    ops::block(vm, b)?;
                    Ok(IterStep::Blocked)
                }
                Ret::Call(..) => unreachable!("a host object's next item is not a call"),
            }
        }
        _ => unreachable!("the dispatch loop sends only coroutines, channels and host objects"),
    }
}

/// The item a host object gave last, to make the next one over, when the
/// loop lets no item out (`Proto::reuses`): its variable, nil before the
/// first item (`reuse::loops` checks the compiler put the nil there), holds
/// nothing else. None under a debugger, whose expressions may keep an item.
/// `slot` is the loop variable's (see `Iteration`). Called by the host
/// object, not here: a call in the dispatch loop's inlined part changed how
/// its registers were allocated (AWFY +2.8 % instructions).
pub fn spare_item(vm: &Vm, fiber: &Fiber, slot: usize) -> Option<Handle> {
    let f = fiber.frames.last()?;
    let pc = f.pc.checked_sub(1)?;
    if vm.debug.is_some() || !f.proto.reuses.contains(&pc) {
        return None;
    }
    match fiber.stack[slot] {
        Value::Obj(h) => Some(h),
        _ => None,
    }
}
