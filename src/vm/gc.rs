//! Precise mark-sweep collection. It runs only between slices, when every live
//! value is in a fiber's registers, a global, a constant or a reachable object.

use super::fiber::Fiber;
use super::object::Obj;
use super::value::{Handle, Value};
use super::Vm;

/// Collects garbage given every fiber that may still run.
pub fn collect(vm: &mut Vm, fibers: &[&Fiber]) {
    let mut work: Vec<Handle> = Vec::new();
    let push = |v: &Value, work: &mut Vec<Handle>| {
        if let Value::Obj(h) = v {
            work.push(*h);
        }
    };
    for v in &vm.globals {
        push(v, &mut work);
    }
    for p in &vm.protos {
        for v in &p.consts {
            push(v, &mut work);
        }
    }
    let pre = vm.prelude;
    for v in [pre.map, pre.filter, pre.reduce, pre.each, pre.sort_by].iter().flatten() {
        push(v, &mut work);
    }
    for f in fibers {
        for v in &f.stack[..f.live_top()] {
            push(v, &mut work);
        }
        for fr in &f.frames {
            if let Some(h) = fr.closure {
                work.push(h);
            }
        }
    }
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
        match obj {
            Obj::List(items) => items.iter().for_each(&mut push),
            Obj::Map(m) => m.values().for_each(&mut push),
            Obj::Cell(v) => push(v),
            Obj::Closure(c) => work.extend(c.upvals.iter().copied()),
            Obj::Error(e) => e.others.iter().for_each(&mut push),
            Obj::Str(_) | Obj::Native(_) | Obj::Range(..) | Obj::Free => {}
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
    heap.threshold = (live * 2).max(8 << 20);
}
