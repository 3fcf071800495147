//! The collector reclaims cyclic garbage: a program that builds and drops cycles
//! in a loop leaves (after a final collection) only a handful of live objects.

use csp::runner;

/// A runtime with all of `csp run`'s reach, as a VM the test inspects.
fn fresh_vm() -> csp::vm::Vm {
    csp::embed::Runtime::new(csp::embed::Options { caps: csp::embed::Caps::all(), ..Default::default() }).into_vm()
}

/// Runs `src` to completion in-process and returns the VM for inspection.
fn run(src: &'static str) -> (csp::vm::Vm, String) {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let mut vm = fresh_vm();
            vm.out.capture();
            let out = runner::run_source(&mut vm, "gc.csp", src, false);
            assert_eq!(out.exit_code, 0, "{}", out.stderr);
            let stdout = String::from_utf8_lossy(&vm.out.take()).into_owned();
            (SendVm(vm), stdout)
        })
        .unwrap()
        .join()
        .map(|(v, s)| (v.0, s))
        .expect("interpreter panicked")
}

/// The VM is `!Send` (it holds `Rc`s); it is only moved back to the test thread
/// after its own thread has finished with it, so nothing is shared.
struct SendVm(csp::vm::Vm);
unsafe impl Send for SendVm {}

const CYCLES: &str = r#"
let n = 0
for i in 0..300000 {
    let a = []
    let b = [a]
    a.push(b)
    let m = {}
    m.self = m
    m.list = a
    let f = fn() { return m }
    m.f = f
    n += len(a) + len(m)
}
print(n)
"#;

/// Guards: list↔list, map→self and closure↔map cycles are all reclaimed.
#[test]
fn cycles_are_collected() {
    let baseline = {
        let mut vm = fresh_vm();
        csp::vm::gc::collect(&mut vm, Vec::new());
        vm.heap.count()
    };
    let (mut vm, out) = run(CYCLES);
    assert_eq!(out, "1200000\n");
    csp::vm::gc::collect(&mut vm, Vec::new());
    let live = vm.heap.count();
    assert!(live < 10_000, "{live} objects still live after a full collection (baseline {baseline})");
    // Nothing the loop made survives: only the prelude, builtins and constants.
    assert!(live <= baseline + 100, "{live} live vs {baseline} for an empty VM");
}

/// Guards: live data reachable from a global survives collection, and garbage
/// hanging off it does not.
#[test]
fn reachable_cycles_survive() {
    // `size` refers to `keep`, which makes `keep` a global (top-level names no
    // function uses live in the top level's registers and end with it).
    let (mut vm, out) = run(r#"
let keep = []
fn size() { return len(keep) }
for i in 0..100000 {
    let a = [i]
    a.push(a)
    if i % 10000 == 0 { keep.push(a) }
}
print(size())
"#);
    assert_eq!(out, "10\n");
    csp::vm::gc::collect(&mut vm, Vec::new());
    let live = vm.heap.count();
    let baseline = {
        let mut vm = fresh_vm();
        csp::vm::gc::collect(&mut vm, Vec::new());
        vm.heap.count()
    };
    // `keep` and its 10 self-referential lists survive, nothing else.
    assert!(live >= baseline + 11, "{live} vs {baseline}: live data was collected");
    assert!(live <= baseline + 100, "{live} vs {baseline}: garbage survived");
    let slot = vm.global_names["keep"] as usize;
    let keep = vm.globals[slot];
    assert_eq!(csp::display::display(&vm.heap, keep).matches("[...]").count(), 10);
}

/// Guards: a fiber started by a `go` statement that runs to its end at once
/// frees its task right then (skynet's million leaves), not at a collection.
#[test]
fn finished_fire_and_forget_tasks_are_freed_at_once() {
    let (vm, out) = run(r#"
let wg = waitgroup()
let total = [0]
fn bump(k) {
    total[0] += k
    wg.done()
}
wg.add(200000)
for i in 0..200000 {
    go bump(1)
}
wait wg
print(total[0])
"#);
    assert_eq!(out, "200000\n");
    // Without a collection, 200,000 finished tasks would still hold slots.
    let live = vm.heap.count();
    assert!(live < 20_000, "{live} objects: finished tasks were left for the collector");
}

/// Guards: a call's window does not keep what its registers held before. Each
/// round builds a tree of about 5 MB and checks it; while `make` runs, the
/// register its result will land in held the round before's tree, and a call
/// through a global that left it there kept two trees live (the run then
/// needed more than 14 MB; it needs under 8).
#[test]
fn a_call_window_drops_the_last_rounds_result() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/gc/call_window_garbage.csp");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_csp"))
        .args(["run", "--max-memory", "11M", script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1572858\n");
}
