//! Precise mark-sweep collection. It runs only between slices, when every live
//! value is in a fiber's registers, a global, a constant or a reachable object.

use super::fiber::Fiber;
use super::object::Obj;
use super::value::{Handle, Value};
use super::Vm;
use crate::sched::{task::TaskState, timer::TimerKind, Resume};

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
        let s = &f.sched;
        work.extend(s.task);
        if let Some(x) = &s.extra {
            work.extend(x.co_stack.iter().copied());
            work.extend(x.locks.iter().copied());
            work.extend(x.select_chans.iter().flatten().copied());
            for sc in &x.scopes {
                work.extend(sc.children.iter().copied());
                sc.errors.iter().for_each(|v| push(v, &mut work));
            }
            if let Some(p) = &x.pending {
                push(p, &mut work);
            }
        }
        match &s.resume {
            Some(Resume::Value(v)) | Some(Resume::Throw(v)) => push(v, &mut work),
            Some(Resume::Pair(v, _)) | Some(Resume::Select(_, v, _)) => push(v, &mut work),
            _ => {}
        }
    }
    for t in &vm.sched.timers {
        match t.kind {
            TimerKind::Send(h) | TimerKind::Tick(h, _) => work.push(h),
            TimerKind::Wake(_) => {}
        }
    }
    work.extend(vm.sched.main_task);
    work.extend(vm.sched.pending_tasks());
    for v in vm.sched.unstarted.roots() {
        push(&v, &mut work);
    }
    if let Some(e) = &vm.sched.top_error {
        push(e, &mut work);
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
            Obj::Chan(c) => {
                c.buf.iter().for_each(&mut push);
                c.sendq.iter().for_each(|s| push(&s.value));
            }
            Obj::Coroutine(c) => {
                push(&c.func);
                c.ctx.stack.iter().for_each(&mut push);
                work.extend(c.ctx.frames.iter().filter_map(|f| f.closure));
            }
            Obj::Task(t) => {
                if let TaskState::Pending(call) = &t.state {
                    call.iter().for_each(&mut push);
                }
                push(&t.result());
                work.extend(t.children().iter().copied());
                // Failures propagate up the owner chain, even past a finished owner
                // nothing else refers to (a REPL entry whose fibers live on).
                work.extend(t.owner);
                work.extend(t.done_chan());
            }
            Obj::Str(_) | Obj::Native(_) | Obj::Range(..) | Obj::Mutex(_) | Obj::WaitGroup(_) | Obj::Free => {}
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
