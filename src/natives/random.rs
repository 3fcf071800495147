//! The random helpers, all on the VM's generator (seeded from the operating
//! system on each run; `--seed n` and `seed(n)` make it repeat): `random`,
//! `randint`, `choice`, `shuffle`, `sample`, `seed`, and the list methods
//! `xs.shuffle()`, `xs.choice()`, `xs.sample(k)`. For secrets use std/crypto,
//! which reads the operating system's generator every time.

use super::args::{arity, int_arg};
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Handle, Res, Rng, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_native("random", random);
    vm.define_native("randint", randint);
    vm.define_native("choice", choice);
    vm.define_native("shuffle", shuffle);
    vm.define_native("sample", sample);
    vm.define_native("seed", seed);
}

/// `seed(n)`: `random` and the other random helpers repeat from here on, as
/// with `--seed n` (`select`'s choices keep their own generator).
fn seed(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("seed", args, 1, 1)?;
    let n = int_arg(&vm.heap, "seed", args[0])?;
    vm.rng = Rng::new(n as u64);
    Ok(Value::Nil)
}

/// A uniform int in [0, n) for n > 0: multiply-shift maps 64 random bits onto
/// the range with negligible bias.
fn below(rng: &mut Rng, n: u128) -> u128 {
    (rng.next_u64() as u128 * n) >> 64
}

/// A uniform int in [lo, hi].
fn between(vm: &mut Vm, lo: i64, hi: i64) -> Value {
    let span = (hi as i128 - lo as i128 + 1) as u128;
    Value::Int((lo as i128 + below(&mut vm.rng, span) as i128) as i64)
}

/// `random()` is a float in [0, 1); `random(n)` an int in [0, n); `random(a, b)` an
/// int in [a, b].
fn random(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("random", args, 0, 2)?;
    match args {
        [] => Ok(Value::Float(vm.rng.next_f64())),
        [n] => {
            let n = int_arg(&vm.heap, "random", *n)?;
            if n <= 0 {
                return err(ErrorKind::Value, format!("random(n) needs n > 0, got {n}"));
            }
            Ok(between(vm, 0, n - 1))
        }
        [a, b] => range_arg(vm, "random", *a, *b),
        _ => unreachable!(),
    }
}

fn range_arg(vm: &mut Vm, name: &str, a: Value, b: Value) -> Res<Value> {
    let a = int_arg(&vm.heap, name, a)?;
    let b = int_arg(&vm.heap, name, b)?;
    if a > b {
        return err(ErrorKind::Value, format!("{name}(a, b) needs a <= b, got {a} > {b}"));
    }
    Ok(between(vm, a, b))
}

/// `randint(a, b)`: an int in [a, b], both ends included (Python's `randint`).
fn randint(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("randint", args, 2, 2)?;
    range_arg(vm, "randint", args[0], args[1])
}

/// What `choice` and `sample` draw from: a list's items, a string's
/// characters, a range's ints.
enum Population {
    List(Handle, usize),
    Str(Vec<char>),
    Range(i64, u128),
}

impl Population {
    fn of(vm: &Vm, name: &str, v: Value) -> Res<Population> {
        if let Value::Obj(h) = v {
            match vm.heap.get(h) {
                Obj::List(l) => return Ok(Population::List(h, l.len())),
                Obj::Str(s) => return Ok(Population::Str(s.s.chars().collect())),
                &Obj::Range(lo, hi) => return Ok(Population::Range(lo, (hi as i128 - lo as i128).max(0) as u128)),
                _ => {}
            }
        }
        let t = vm.heap.type_name(v);
        err(ErrorKind::Type, format!("{name}() needs a list, string or range, got {t}"))
    }

    fn kind(&self) -> &'static str {
        match self {
            Population::List(..) => "list",
            Population::Str(_) => "string",
            Population::Range(..) => "range",
        }
    }

    fn len(&self) -> u128 {
        match self {
            Population::List(_, n) => *n as u128,
            Population::Str(c) => c.len() as u128,
            Population::Range(_, n) => *n,
        }
    }

    fn item(&self, vm: &mut Vm, i: u128) -> Value {
        match self {
            Population::List(h, _) => vm.heap.as_list(Value::Obj(*h)).expect("a list")[i as usize],
            Population::Str(c) => vm.heap.string(c[i as usize].to_string()),
            Population::Range(lo, _) => Value::Int((*lo as i128 + i as i128) as i64),
        }
    }
}

/// `choice(xs)`: a random item of a list, character of a string or int of a
/// range; an empty one is an `index` error.
fn choice(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("choice", args, 1, 1)?;
    let p = Population::of(vm, "choice", args[0])?;
    pick(vm, &p, "choice")
}

fn pick(vm: &mut Vm, p: &Population, name: &str) -> Res<Value> {
    let n = p.len();
    if n == 0 {
        return err(ErrorKind::Index, format!("{name}() from an empty {}", p.kind()));
    }
    let i = below(&mut vm.rng, n);
    Ok(p.item(vm, i))
}

/// `xs.choice()`.
pub fn list_choice(vm: &mut Vm, h: Handle) -> Res<Value> {
    let n = vm.heap.as_list(Value::Obj(h)).expect("a list").len();
    pick(vm, &Population::List(h, n), "choice")
}

/// `shuffle(xs)` and `xs.shuffle()`: the list's items in a random order, in place.
fn shuffle(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("shuffle", args, 1, 1)?;
    match args[0] {
        Value::Obj(h) if vm.heap.as_list(args[0]).is_some() => {
            list_shuffle(vm, h);
            Ok(Value::Nil)
        }
        v => err(ErrorKind::Type, format!("shuffle() needs a list, got {}", vm.heap.type_name(v))),
    }
}

pub fn list_shuffle(vm: &mut Vm, h: Handle) {
    let Obj::List(l) = vm.heap.get_mut(h) else { unreachable!("a list") };
    let mut l = std::mem::take(l);
    // Fisher-Yates.
    for i in (1..l.len()).rev() {
        let j = below(&mut vm.rng, i as u128 + 1) as usize;
        l.swap(i, j);
    }
    let Obj::List(slot) = vm.heap.get_mut(h) else { unreachable!("a list") };
    *slot = l;
}

/// `sample(xs, k)` and `xs.sample(k)`: a list of `k` items drawn without
/// replacement (distinct positions), in the order drawn.
fn sample(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("sample", args, 2, 2)?;
    let p = Population::of(vm, "sample", args[0])?;
    draw(vm, &p, args[1])
}

pub fn list_sample(vm: &mut Vm, h: Handle, k: Value) -> Res<Value> {
    let n = vm.heap.as_list(Value::Obj(h)).expect("a list").len();
    draw(vm, &Population::List(h, n), k)
}

fn draw(vm: &mut Vm, p: &Population, k: Value) -> Res<Value> {
    let k = int_arg(&vm.heap, "sample", k)?;
    let n = p.len();
    if k < 0 || k as u128 > n {
        let what = p.kind();
        return err(ErrorKind::Value, format!("sample() of {k} from a {what} of {n}: k must be from 0 to {n}"));
    }
    if k as usize > crate::limits::MAX_LIST {
        return super::list::too_long();
    }
    vm.heap.reserve(k as usize * 16)?;
    let picked = indices(&mut vm.rng, n, k as usize);
    let items: Vec<Value> = picked.into_iter().map(|i| p.item(vm, i)).collect();
    Ok(vm.heap.list(items))
}

/// `k` distinct indices below `n` in random order: a partial Fisher-Yates over
/// all of them when `k` is a good part of `n`, else drawing and skipping
/// repeats (as CPython chooses between its pool and its set).
fn indices(rng: &mut Rng, n: u128, k: usize) -> Vec<u128> {
    if n <= 4 * k as u128 + 32 {
        let mut pool: Vec<u128> = (0..n).collect();
        for i in 0..k {
            let j = i + below(rng, n - i as u128) as usize;
            pool.swap(i, j);
        }
        pool.truncate(k);
        return pool;
    }
    let mut seen = std::collections::HashSet::with_capacity(k);
    let mut out = Vec::with_capacity(k);
    while out.len() < k {
        let i = below(rng, n);
        if seen.insert(i) {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use Value::Int as I;

    #[test]
    fn random_ranges() {
        let mut vm = crate::natives::vm();
        let vm = &mut vm;
        for _ in 0..1000 {
            let Value::Float(f) = call(vm, "random", &[]).unwrap() else { panic!() };
            assert!((0.0..1.0).contains(&f));
            let Value::Int(i) = call(vm, "random", &[I(3)]).unwrap() else { panic!() };
            assert!((0..3).contains(&i));
            let Value::Int(i) = call(vm, "random", &[I(-2), I(2)]).unwrap() else { panic!() };
            assert!((-2..=2).contains(&i));
            let Value::Int(i) = call(vm, "randint", &[I(5), I(6)]).unwrap() else { panic!() };
            assert!((5..=6).contains(&i));
            let Value::Int(_) = call(vm, "random", &[I(i64::MIN), I(i64::MAX)]).unwrap() else { panic!() };
        }
        assert!(call(vm, "random", &[I(0)]).is_err());
        assert!(call(vm, "random", &[I(2), I(1)]).is_err());
        assert!(call(vm, "randint", &[I(2), I(1)]).is_err());
        let draw = |seed: i64| {
            let mut vm = crate::natives::vm();
            call(&mut vm, "seed", &[I(seed)]).unwrap();
            let picks = [call(&mut vm, "random", &[I(1000)]), call(&mut vm, "randint", &[I(0), I(1000)])];
            picks.map(|v| format!("{:?}", v.unwrap())).join(" ")
        };
        assert_eq!(draw(3), draw(3), "same seed, same numbers");
        assert_ne!(draw(3), draw(4), "another seed, other numbers");
    }

    #[test]
    fn samples_are_distinct_and_cover_the_population() {
        let mut rng = Rng::new(7);
        for (n, k) in [(10u128, 10usize), (10, 3), (1000, 5), (1 << 62, 100), (0, 0)] {
            let mut got = indices(&mut rng, n, k);
            assert_eq!(got.len(), k);
            assert!(got.iter().all(|&i| i < n));
            got.sort();
            got.dedup();
            assert_eq!(got.len(), k, "distinct");
        }
        // Every item turns up first, given enough draws.
        let mut first = [0; 5];
        for _ in 0..1000 {
            first[indices(&mut rng, 5, 2)[0] as usize] += 1;
        }
        assert!(first.iter().all(|&c| c > 100), "{first:?}");
    }
}
