//! The dispatch loop's helper macros (`reg!`, `t!`, `call!`, `jump_by!`, ...),
//! defined inside `exec::dispatch` by `loop_helpers!` so that they work on the
//! loop's own locals: the loop stays one function, whose register allocation
//! decides its speed (benches/README.md, "Instruction counts").

/// Defines the dispatch loop's macros over its locals, which the caller names:
/// a macro written out here cannot name a function's locals itself (hygiene).
/// `$d` is `$`, for the inner macros' own arguments.
macro_rules! loop_helpers {
    ($d:tt, $vm:ident, $fiber:ident, $budget:ident, $proto:ident, $base:ident, $code:ident, $ip:ident, $regs:ident, $left:ident) => {
        macro_rules! reg {
            ($d r:expr) => {
                // SAFETY: see the function's doc comment.
                *unsafe { &mut *$regs.add($d r as usize) }
            };
        }
        // The running frame.
        macro_rules! frame {
            () => {
                // SAFETY: a running fiber has a frame.
                unsafe { $fiber.frames.last().unwrap_unchecked() }
            };
        }
        macro_rules! save_pc {
            () => {{
                save_pc_only!();
                *$budget = $left;
            }};
        }
        // The running frame's pc, for a call that continues in this loop.
        macro_rules! save_pc_only {
            () => {{
                // SAFETY: a running fiber has a frame.
                unsafe { $fiber.frames.last_mut().unwrap_unchecked() }.pc = pc!();
            }};
        }
        // A global's slot. The compiler takes indices from `Vm::global_slot`, and
        // `globals` never shrinks, so no bounds check.
        macro_rules! global {
            ($d idx:expr) => {{
                debug_assert!(($d idx as usize) < $vm.globals.len());
                // SAFETY: see above.
                unsafe { $vm.globals.as_mut_ptr().add($d idx as usize) }
            }};
        }
        // The index of the next instruction (what a Frame saves).
        macro_rules! pc {
            () => {
                // SAFETY: ip points into `code`, at or past its start.
                unsafe { $ip.offset_from($code) as u32 }
            };
        }
        macro_rules! jump {
            ($d target:expr) => {
                // SAFETY: the compiler emits jump targets within the Proto's code.
                $ip = unsafe { $code.add($d target as usize) }
            };
        }
        // A jump of `Op::relative_target`'s: from the next instruction.
        macro_rules! jump_by {
            ($d offset:expr) => {
                // SAFETY: the compiler emits jump targets within the Proto's code.
                $ip = unsafe { $ip.offset($d offset as i32 as isize) }
            };
        }
        // A forward conditional jump (see `keep_branch`).
        macro_rules! branch_by {
            ($d offset:expr) => {{
                keep_branch();
                jump_by!($d offset);
            }};
        }
        macro_rules! t {
            ($d e:expr) => {
                match $d e {
                    Ok(v) => v,
                    Err(f) => {
                        save_pc!();
                        return Err(f);
                    }
                }
            };
        }
        macro_rules! reload {
            () => {{
                // SAFETY: a running fiber has a frame.
                let f = unsafe { $fiber.frames.last().unwrap_unchecked() };
                $proto = f.proto;
                $base = f.base as usize;
                $code = $proto.code.as_ptr();
                jump!(f.pc);
                // SAFETY: a frame's registers are on the stack (`call_value` and
                // `enter_closure!` size it before pushing the frame).
                $regs = unsafe { $fiber.stack.as_mut_ptr().add($base) };
            }};
        }
        macro_rules! tick {
            () => {
                $left -= 1;
                if $left == 0 {
                    save_pc!();
                    return Ok(Halt::Preempted);
                }
            };
        }
        // The common call: a closure given exactly its parameters gets a frame
        // here, without `call_value`'s general checks; anything else falls through.
        macro_rules! enter_closure {
            ($d callee:expr, $d args:expr, $d argc:expr, $d ret:expr) => {
                if let Value::Obj(h) = $d callee {
                    if let Obj::Closure(c) = $vm.heap.get(h) {
                        let p = c.proto;
                        if p.nparams == $d argc && !p.has_rest && $fiber.frames.len() < crate::limits::MAX_FRAMES {
                            let args = $d args;
                            let need = args + p.nregs as usize;
                            if $fiber.stack.len() < need {
                                $fiber.grow_stack(need, &mut $vm.heap);
                            }
                            $fiber.frames.push(Frame {
                                proto: p,
                                closure: Some(h),
                                pc: 0,
                                base: args as u32,
                                ret: $d ret as u32,
                                argc: $d argc,
                            });
                            $proto = p;
                            $base = args;
                            $code = p.code.as_ptr();
                            $ip = $code;
                            // SAFETY: the stack was sized above.
                            $regs = unsafe { $fiber.stack.as_mut_ptr().add($base) };
                            tick!();
                            continue;
                        }
                    }
                }
            };
        }
        // After a call made out of line: a frame to run, a value in place, or a wait.
        macro_rules! called {
            ($d called:expr) => {{
                match $d called {
                    Called::Frame => reload!(),
                    Called::Value => {}
                    Called::Blocked => return Ok(Halt::Blocked),
                }
                tick!();
            }};
        }
        // `base = base(base+1 .. base+argc)`, the callee already in `base`.
        macro_rules! call {
            ($d b:expr, $d argc:expr) => {{
                let (b, argc) = ($d b, $d argc);
                save_pc_only!();
                let slot = $base + b as usize;
                // SAFETY: slot is a register of this frame.
                let callee = unsafe { load_value($regs.add(b as usize)) };
                enter_closure!(callee, slot + 1, argc, slot);
                // Leaving the loop from here on (an error, a builtin's call) needs it.
                *$budget = $left;
                // Read again rather than kept: fewer values live across the fast path.
                // SAFETY: as above.
                let callee = unsafe { load_value($regs.add(b as usize)) };
                // A builtin that only computes a value (`sqrt`, `len`, `abs`).
                if let Value::Obj(h) = callee {
                    if let Obj::Native(n) = $vm.heap.get(h) {
                        if let NativeFn::Value(f) = n.func {
                            let args = slot + 1;
                            let v = f($vm, &$fiber.stack[args..args + argc as usize])?;
                            reg!(b) = v;
                            tick!();
                            continue;
                        }
                    }
                }
                called!(call_value($vm, $fiber, callee, slot + 1, argc as usize, slot)?);
            }};
        }
        macro_rules! arith {
            ($d op:expr, $d dst:expr, $d a:expr, $d b:expr, $d fast:ident, $d fop:tt) => {{
                // Matching on references reads the tag and payload in place
                // instead of copying whole values through the stack.
                match (&reg!($d a), &reg!($d b)) {
                    (Value::Int(i), Value::Int(j)) => {
                        if let Some(r) = i.$d fast(*j) {
                            reg!($d dst) = Value::Int(r);
                            continue;
                        }
                    }
                    (Value::Float(x), Value::Float(y)) => {
                        reg!($d dst) = Value::Float(x $d fop y);
                        continue;
                    }
                    _ => {}
                }
                let (x, y) = (reg!($d a), reg!($d b));
                let v = t!(arith_slow($vm, $d op, x, y));
                reg!($d dst) = v;
            }};
        }
        // `x <cmp> y`, two places (registers or a constant).
        macro_rules! compare {
            ($d cmp:expr, $d x:expr, $d y:expr) => {{
                let eq = matches!($d cmp, Cmp::Eq | Cmp::Ne);
                let (x, y): (&Value, &Value) = (&$d x, &$d y);
                let fast = match (x, y) {
                    (Value::Int(i), Value::Int(j)) => Some($d cmp.ints(*i, *j)),
                    // `x == nil`, `x != nil`: nil equals only nil.
                    (Value::Nil, v) | (v, Value::Nil) if eq => Some(matches!(v, Value::Nil) == ($d cmp == Cmp::Eq)),
                    // Two strings (`c == "{"`): by content.
                    (Value::Obj(a), Value::Obj(b)) if eq => {
                        arith::str_eq(&$vm.heap, *a, *b).map(|same| same == ($d cmp == Cmp::Eq))
                    }
                    _ => None,
                };
                match fast {
                    Some(r) => r,
                    None => {
                        let (x, y) = (*x, *y);
                        t!(compare_slow($vm, $d cmp, x, y))
                    }
                }
            }};
        }

        // `a <cmp> imm`, for an integer literal.
        macro_rules! compare_imm {
            ($d cmp:expr, $d a:expr, $d imm:expr) => {
                match &reg!($d a) {
                    Value::Int(i) => $d cmp.ints(*i, $d imm as i64),
                    _ => {
                        let x = reg!($d a);
                        t!(compare_slow($vm, $d cmp, x, Value::Int($d imm as i64)))
                    }
                }
            };
        }
    };
}

pub(super) use loop_helpers;
