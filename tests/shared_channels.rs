//! Channels shared between isolates (docs/isolates.md) through the real
//! binary, with real worker threads: the semantics of local channels
//! (buffered and unbuffered, close, range, len/cap, select with timeouts, a
//! channel sent over a channel), what cannot cross, cancellation and
//! deadlocks across isolates, and a stress run that loses nothing.

mod common;

use common::{ok, run_sh};

#[test]
fn values_flow_both_ways_through_buffered_and_unbuffered_channels() {
    let out = ok(
        "sc_flow",
        r#"
import "std/isolate"
fn producer(ch, n) {
    for i in 0..n { ch <- i * i }
    close(ch)
    return "produced"
}
let ch = chan(4)
let t = isolate.run(producer, ch, 10)
let sum = 0
for v in ch { sum += v }
print(sum, wait t, len(ch), cap(ch))

fn echo(inp, out) {
    for v in inp { out <- v + 1 }
    close(out)
}
let a = chan()
let b = chan()
let e = isolate.run(echo, a, b)
let x = 0
for i in 0..1000 {
    a <- x
    x = <-b
}
close(a)
let last, ok = <-b
print(x, last, ok)
wait e

fn fill(c) { c <- 1; c <- 2; return len(c) }
let c = chan(3)
print(wait isolate.run(fill, c), len(c), c)
"#,
    );
    assert_eq!(out, "285 produced 0 4\n1000 nil false\n2 2 <chan 2/3>\n");
}

#[test]
fn select_mixes_local_and_shared_channels_with_timeouts() {
    let out = ok(
        "sc_select",
        r#"
import "std/isolate"
fn slow(out) {
    sleep(50)
    out <- "remote"
}
let local = chan()
let remote = chan()
isolate.run(slow, remote)
let got = []
for i in 0..3 {
    select {
        case v = <-remote { got.push(v) }
        case v = <-local { got.push(v) }
        case <-after(400) { got.push("timeout") }
    }
    if i == 0 { go fn() { local <- "local" }() }
}
print(got)

fn drain(ch, n) {
    let s = 0
    for i in 0..n { s += <-ch }
    return s
}
let c = chan()
let d = isolate.run(drain, c, 100)
let sent = 0
while sent < 100 {
    select {
        case c <- sent { sent += 1 }
        case <-after(2000) { print("stuck") }
    }
}
print(wait d)

fn poll(c) {
    select {
        case v = <-c { return v }
        default { return "empty" }
    }
}
print(wait isolate.run(poll, chan()))
fn timer(t) { return type(<-t) }
print(wait isolate.run(timer, after(20)))
"#,
    );
    assert_eq!(out, "[\"remote\", \"local\", \"timeout\"]\n4950\nempty\nfloat\n");
}

#[test]
fn select_chooses_fairly_between_a_local_and_a_shared_channel() {
    let out = ok(
        "sc_fair",
        r#"
import "std/isolate"
fn feed(c, n) { for i in 0..n { c <- i } }
let shared = chan(1000)
let local = chan(1000)
isolate.run(feed, shared, 1000)
feed(local, 1000)
while len(shared) < 1000 { sleep(1) }
// Both stay ready for all 1000 selects.
let from = {shared: 0, local: 0}
for i in 0..1000 {
    select {
        case <-shared { from.shared += 1 }
        case <-local { from.local += 1 }
    }
}
print(from.shared > 400, from.local > 400, from.shared + from.local)
"#,
    );
    assert_eq!(out, "true true 1000\n");
}

#[test]
fn a_channel_sent_over_a_channel_is_the_same_channel() {
    let out = ok(
        "sc_chan_of_chans",
        r#"
import "std/isolate"
fn server(reqs) {
    for req in reqs { req.reply <- req.n * 2 }
    return "server done"
}
let reqs = chan()
let s = isolate.run(server, reqs)
let got = []
for i in 0..5 {
    let reply = chan()
    reqs <- {n: i, reply: reply}
    got.push(<-reply)
}
close(reqs)
print(got, wait s)

fn back(c) { return [c, c] }
let c = chan()
let both = wait isolate.run(back, c)
print(both[0] == c, both[0] is both[1])
"#,
    );
    assert_eq!(out, "[0, 2, 4, 6, 8] server done\ntrue true\n");
}

#[test]
fn close_wakes_receivers_and_senders_in_other_isolates() {
    let out = ok(
        "sc_close",
        r#"
import "std/isolate"
fn rx(c) { let v, ok = <-c; return [v, ok] }
let c = chan()
let tasks = [isolate.run(rx, c), isolate.run(rx, c)]
sleep(30)
close(c)
print(wait tasks)

fn tx(c) {
    try { c <- 1 } catch e { return e.message }
}
let d = chan()
let t = isolate.run(tx, d)
sleep(30)
close(d)
print(wait t)

let e = chan(2)
e <- "kept"
close(e)
fn rest(c) { let out = []; for v in c { out.push(v) }; return out }
print(wait isolate.run(rest, e))
try { close(e) } catch err { print(err.message) }
"#,
    );
    assert_eq!(out, "[[nil, false], [nil, false]]\nsend on closed channel\n[\"kept\"]\nclose of closed channel\n");
}

#[test]
fn functions_sent_on_a_channel_feed_a_long_lived_worker() {
    let out = ok(
        "sc_fn_pool",
        r#"
import "std/isolate"
import "std/path"
fn worker(jobs, results) {
    for f in jobs { results <- f() }
    return "worker done"
}
let jobs = chan()
let results = chan(10)
let w = isolate.run(worker, jobs, results)
let base = 10
for i in 0..3 {
    jobs <- fn() => path.join("a", "${base + i}")
}
close(jobs)
print(wait w, [<-results, <-results, <-results])
"#,
    );
    assert_eq!(out, "worker done [\"a/10\", \"a/11\", \"a/12\"]\n");
}

#[test]
fn what_cannot_cross_fails_the_send_and_nothing_is_sent() {
    let out = ok(
        "sc_cannot",
        r#"
import "std/isolate"
fn recv1(c) { return <-c }
let c = chan(1)
let r = isolate.run(recv1, c)
try { c <- {lock: mutex()} } catch e { print(e.kind, e.message) }
c <- 5
print(wait r)

let buffered = chan(1)
buffered <- mutex()
try { isolate.run(recv1, buffered) } catch e { print(e.message) }
print(len(buffered), type(<-buffered))
"#,
    );
    assert_eq!(
        out,
        "type send on a shared channel: a mutex cannot cross to another isolate (at the value.lock)\n5\n\
         isolate.run(): a channel buffering a mutex cannot cross to another isolate (at argument 1)\n1 mutex\n"
    );
}

#[test]
fn cancelling_a_task_parked_on_a_shared_channel_runs_its_finally() {
    let out = ok(
        "sc_cancel",
        r#"
import "std/isolate"
fn blocked(ch, out) {
    try {
        out <- "parked"
        return <-ch
    } finally {
        out <- "finally ran"
    }
}
let ch = chan()
let out = chan(2)
let t = isolate.run(blocked, ch, out)
print(<-out)
t.cancel()
print(<-out)
try { wait t } catch e { print("caught", e.kind) }
fn sel(a, b) {
    select {
        case <-a { return "a" }
        case <-b { return "b" }
    }
}
let a = chan()
let u = isolate.run(sel, a, chan())
sleep(20)
u.cancel()
try { wait u } catch e { print("select", e.kind) }
// The cancelled select left no receiver behind on `a`.
select {
    case a <- "after" { print("sent to a cancelled fiber") }
    default { print("no receiver left") }
}
"#,
    );
    assert_eq!(out, "parked\nfinally ran\ncaught cancelled\nselect cancelled\nno receiver left\n");
}

#[test]
fn a_receive_nobody_can_complete_across_isolates_is_a_deadlock() {
    let (code, _, err) = run_sh(
        "sc_deadlock",
        "",
        "import \"std/isolate\"\nfn stuck(ch) { return <-ch }\nlet ch = chan()\nprint(wait isolate.run(stuck, ch))\n",
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("blocked on a job on worker isolate"), "{err}");
    assert!(err.contains("blocked on receive from channel <chan 0/0> at"), "{err}");
}

/// Producers and consumers on several isolates through one buffered
/// channel and `select`: every value arrives exactly once. Run many times,
/// as races show only sometimes.
#[test]
fn many_producers_and_consumers_lose_and_duplicate_nothing() {
    let src = r#"
import "std/isolate"
fn produce(out, base, n) {
    for i in 0..n { out <- base + i }
    return n
}
fn consume(inp, tick, results) {
    let seen = {}
    while true {
        select {
            case v, ok = <-inp {
                if !ok { results <- seen; return nil }
                seen[v] = true
            }
            case tick <- 1 { }
        }
    }
}
let n = 3000
let inp = chan(8)
let tick = chan()
let results = chan(4)
let cons = []
for k in 0..3 { cons.push(isolate.run(consume, inp, tick, results)) }
let prods = []
for k in 0..3 { prods.push(isolate.run(produce, inp, k * n, n)) }
go fn() { for t in tick {} }()
wait prods
close(inp)
let all = {}
let dup = 0
for k in 0..3 {
    for v in (<-results).keys() {
        if all[v] { dup += 1 }
        all[v] = true
    }
}
wait cons
close(tick)
print(len(all), dup)
"#;
    for _ in 0..15 {
        assert_eq!(ok("sc_stress", src), "9000 0\n");
    }
}

/// A select that locks a shared channel and, through a local case, wakes a
/// fiber whose own select waits on that same shared channel.
#[test]
fn a_local_case_may_wake_a_fiber_waiting_on_the_same_shared_channel() {
    let out = ok(
        "sc_relock",
        r#"
import "std/isolate"
fn hold(c) { return nil }
let l = chan()
let s = chan()
wait isolate.run(hold, s)
let b = go fn() {
    select {
        case v = <-l { return "b got ${v}" }
        case v = <-s { return "b got ${v} from s" }
    }
}()
sleep(10)
select {
    case l <- 1 { print("a sent") }
    case v = <-s { print("a got", v) }
}
print(wait b)
"#,
    );
    assert_eq!(out, "a sent\nb got 1\n");
}
