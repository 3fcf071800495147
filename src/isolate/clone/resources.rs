//! Resources in packets (docs/isolates.md, "Resources that move"): taken
//! out of the packing isolate, leaving a marker; put back in place when the
//! packet is not delivered (a send that did not happen, a packet dropped
//! unreceived, which comes back through the packer's mailbox).

use super::{Node, Packet, Slot};
use crate::isolate::moved::Moved;
use crate::sched::shared;
use crate::vm::host::Moving;
use crate::vm::{Handle, Obj, Value, Vm};

/// Takes the resource at `h` out of this isolate, leaving the marker whose
/// uses fail; fibers here waiting on its descriptor wake to find it moved.
pub(super) fn move_out(vm: &mut Vm, h: Handle, crossing: &str) -> (Box<dyn Moving>, u64) {
    let Obj::Host(o) = vm.heap.get(h) else { unreachable!("a resource is a host object") };
    if let Some(fd) = o.fd() {
        crate::sched::ops::fd_closing(vm, fd);
    }
    let Obj::Host(o) = vm.heap.get_mut(h) else { unreachable!() };
    let moving = o.take_to_move();
    let left = Moved::new(&**o, crossing);
    let id = left.id;
    *o = Box::new(left);
    (moving, id)
}

/// A packet dropped with resources in it (never received: a shared channel
/// collected, a receiver that could not unpack it, a send that failed) sends
/// them back to the isolate that packed them, as undelivered mail.
impl Drop for Packet {
    fn drop(&mut self) {
        if self.resources.iter().any(Option::is_some) {
            if let Some(home) = self.home.take() {
                let packet = std::mem::take(self);
                home.give_back(Box::new(packet));
            }
        }
    }
}

/// A value this isolate packed that was not delivered (a send that did not
/// happen, a packet dropped unreceived).
pub(super) fn restore_one(vm: &mut Vm, p: shared::Payload) {
    if let Ok(mut packet) = p.downcast::<Packet>() {
        restore(vm, &mut packet);
    }
}

/// Puts the resources of `packet`, which this isolate packed, back where
/// they were (each replacing the marker its move left), as if they never
/// left. One whose marker is gone (collected: nothing here refers to it)
/// closes.
fn restore(vm: &mut Vm, packet: &mut Packet) {
    for node in &packet.nodes {
        let Node::Resource(i, held) = node else { continue };
        let Some(moving) = packet.resources[*i as usize].take() else { continue };
        let (h, id) = packet.origins[*i as usize];
        // The marker may have been collected, and its slot reused since.
        let here = matches!(vm.heap.get(h), Obj::Host(o) if o.downcast_ref::<Moved>().is_some_and(|m| m.id == id));
        if !here {
            continue;
        }
        let origin = |s: &Slot| match *s {
            Slot::Node(j) => match &packet.nodes[j as usize] {
                Node::Resource(k, _) => Value::Obj(packet.origins[*k as usize].0),
                _ => Value::Nil,
            },
            _ => Value::Nil,
        };
        let held: Vec<Value> = held.iter().map(origin).collect();
        land_at(vm, h, moving, &held);
    }
}

/// Lands `moving` in the object at `h` (a placeholder, or the marker it
/// left), given the values it held, already there; a child process is
/// adopted by this isolate.
pub(super) fn land_at(vm: &mut Vm, h: Handle, moving: Box<dyn Moving>, held: &[Value]) {
    let obj = moving.land(held);
    vm.heap.note_growth(obj.size());
    let adopted = obj.adopted();
    *vm.heap.get_mut(h) = Obj::Host(obj);
    if adopted {
        crate::sched::ops::adopt_here(vm, h);
    }
}
