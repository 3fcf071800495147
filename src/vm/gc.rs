//! Precise mark-sweep collection. It runs only between slices, when every live
//! value is in a fiber's registers, a global, a constant or a reachable object.

use super::object::Obj;
use super::value::{Handle, Value};
use super::Vm;

/// Collects garbage. `work` holds the roots of the scheduler (its fibers, tasks
/// and timers); the VM adds its own (globals, the constants of every proto) and
/// the loader's (the prelude's functions).
pub fn collect(vm: &mut Vm, mut work: Vec<Handle>) {
    work.extend(vm.loader.roots());
    work.extend(vm.heap.ascii_roots());
    let vm_roots = vm.globals.iter().chain(vm.protos.iter().flat_map(|p| p.consts.iter()));
    work.extend(vm_roots.filter_map(|v| match v {
        Value::Obj(h) => Some(*h),
        _ => None,
    }));
    mark(vm, work);
    sweep(vm);
}

fn mark(vm: &mut Vm, mut work: Vec<Handle>) {
    let heap = &mut vm.heap;
    while let Some(h) = work.pop() {
        let i = h.0 as usize;
        if heap.marks[i] {
            continue;
        }
        heap.marks[i] = true;
        let obj = &heap.objs[i];
        let mut push = |v: &Value| {
            if let Value::Obj(c) = v {
                if !heap_marked(&heap.marks, *c) {
                    work.push(*c);
                }
            }
        };
        let mut push_value = |v: Value| push(&v);
        match obj {
            Obj::List(items) => items.iter().for_each(&mut push),
            Obj::Map(m) => m.values().for_each(&mut push),
            Obj::Cell(v) => push(v),
            Obj::Closure(c) => work.extend(c.upvals.iter().copied()),
            Obj::Error(e) => e.others.iter().for_each(&mut push),
            Obj::Chan(c) => c.trace(&mut push_value),
            Obj::Coroutine(c) => c.trace(&mut push_value),
            Obj::Task(t) => t.trace(&mut push_value),
            Obj::Process(p) => p.trace(&mut push_value),
            Obj::Str(_)
            | Obj::Bytes(_)
            | Obj::Stream(_)
            | Obj::Listener(_)
            | Obj::Udp(_)
            | Obj::Regex(_)
            | Obj::Native(_)
            | Obj::Range(..)
            | Obj::Time(_)
            | Obj::Mutex(_)
            | Obj::WaitGroup(_)
            | Obj::Free => {}
        }
    }
}

#[inline]
fn heap_marked(marks: &[bool], h: Handle) -> bool {
    marks[h.0 as usize]
}

fn sweep(vm: &mut Vm) {
    let heap = &mut vm.heap;
    let mut live = 0;
    for i in 0..heap.objs.len() {
        if heap.marks[i] {
            heap.marks[i] = false;
            live += heap.objs[i].size();
        } else if !matches!(heap.objs[i], Obj::Free) {
            heap.objs[i] = Obj::Free;
            heap.free.push(i as u32);
        }
    }
    heap.live = live;
    heap.allocated = 0;
}
