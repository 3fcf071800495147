//! Values with nothing inside them, packed without the walk (mod.rs).

use super::{Node, Packet, Slot};
use crate::vm::{Obj, Value, Vm};

/// Values with nothing inside them (numbers, strings), as most messages
/// are: packed without the walk's tables (a value streamed on a shared
/// channel spent a third of its packing making and dropping them).
pub(super) fn pack(vm: &Vm, values: &[Value]) -> Option<Packet> {
    let mut nodes = Vec::new();
    let mut roots = Vec::with_capacity(values.len());
    for &v in values {
        roots.push(match v {
            Value::Nil => Slot::Nil,
            Value::Bool(b) => Slot::Bool(b),
            Value::Int(i) => Slot::Int(i),
            Value::Float(x) => Slot::Float(x),
            Value::Obj(h) => match vm.heap.get(h) {
                Obj::Str(s) => {
                    nodes.push(Node::Str(s.s.as_str().into()));
                    Slot::Node(nodes.len() as u32 - 1)
                }
                _ => return None,
            },
        });
    }
    let mut packet = Packet::default();
    (packet.nodes, packet.roots) = (nodes, roots);
    Some(packet)
}
