//! The structured clone's property: any value that can cross equals its copy,
//! object for object (shared parts shared the same way, cycles kept), and the
//! copy shares no object with the original.

use super::clone::{pack, unpack};
use crate::vm::object::ErrorObj;
use crate::vm::value::new_map;
use crate::vm::{ErrorKind, Handle, Key, Obj, Rng, Value, Vm};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Random values: every kind that copies, with parts reused (shared) and
/// lists that contain their ancestors (cycles).
struct Gen {
    rng: Rng,
    made: Vec<Value>,
    /// Keys some maps share, as the maps one literal makes do.
    template: Rc<crate::vm::map::Layout>,
}

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n
    }

    fn text(&mut self) -> String {
        const PIECES: &[&str] = &[
            "a",
            "key",
            "é",
            "日本",
            "🦀",
            " ",
            "\n",
            "\"",
            "long text that is not interned at all, past forty bytes",
        ];
        (0..self.below(4)).map(|_| PIECES[self.below(PIECES.len() as u64) as usize]).collect()
    }

    fn key(&mut self) -> Key {
        match self.below(5) {
            0 => Key::Nil,
            1 => Key::Bool(self.below(2) == 0),
            2 => Key::Int(self.rng.next_u64() as i64 >> self.below(64)),
            3 => Key::Bytes(Rc::from(self.text().as_bytes())),
            _ => Key::Str(self.text().into()),
        }
    }

    fn value(&mut self, vm: &mut Vm, depth: u32, ancestors: &mut Vec<Handle>) -> Value {
        let leaf = depth == 0 || self.below(3) == 0;
        let v = match self.below(if leaf { 8 } else { 12 }) {
            0 => Value::Nil,
            1 => Value::Bool(self.below(2) == 1),
            2 => Value::Int([0, -1, i64::MIN, i64::MAX, self.rng.next_u64() as i64][self.below(5) as usize]),
            3 => Value::Float([0.5, -0.0, f64::INFINITY, f64::NAN, 1e300, self.rng.next_f64()][self.below(6) as usize]),
            4 => {
                let t = self.text();
                vm.heap.str(&t)
            }
            5 => {
                let t = self.text();
                vm.heap.bytes(t.into_bytes())
            }
            6 => {
                let lo = self.below(100) as i64 - 50;
                Value::Obj(vm.heap.alloc(Obj::Range(lo, lo + self.below(10) as i64)))
            }
            7 if !self.made.is_empty() => {
                let i = self.below(self.made.len() as u64) as usize;
                self.made[i]
            }
            7 => Value::Nil,
            8 | 9 => {
                let h = vm.heap.alloc(Obj::List(crate::vm::List::from_slice(&[])));
                ancestors.push(h);
                self.made.push(Value::Obj(h));
                let n = self.below(5);
                let mut items = Vec::new();
                for _ in 0..n {
                    items.push(self.value(vm, depth - 1, ancestors));
                }
                if self.below(4) == 0 {
                    items.push(Value::Obj(ancestors[self.below(ancestors.len() as u64) as usize]));
                }
                ancestors.pop();
                *vm.heap.get_mut(h) = Obj::List(crate::vm::List::from_slice(&items));
                Value::Obj(h)
            }
            10 if self.below(2) == 0 => {
                let values: Vec<Value> =
                    (0..self.template.len()).map(|_| self.value(vm, depth - 1, ancestors)).collect();
                Value::Obj(vm.heap.alloc(Obj::Map(crate::vm::map::Map::from_layout(&self.template, &values))))
            }
            10 => {
                let mut m = new_map(4);
                for _ in 0..self.below(5) {
                    let k = self.key();
                    let v = self.value(vm, depth - 1, ancestors);
                    m.insert(k, v);
                }
                Value::Obj(vm.heap.alloc(Obj::Map(m)))
            }
            _ => {
                let other = self.value(vm, 0, ancestors);
                let others = if matches!(other, Value::Obj(h) if matches!(vm.heap.get(h), Obj::Error(_))) {
                    vec![other]
                } else {
                    Vec::new()
                };
                let e = ErrorObj {
                    message: Rc::from(self.text()),
                    trace: vec![Rc::from("f (x.csp:1:2)")],
                    others,
                    kind: ErrorKind::Value,
                    origin: None,
                };
                Value::Obj(vm.heap.alloc(Obj::Error(Box::new(e))))
            }
        };
        if matches!(v, Value::Obj(_)) {
            self.made.push(v);
        }
        v
    }
}

/// `a` (in `va`) and `b` (in `vb`) are the same graph: `seen` pairs their
/// objects one to one.
fn same(va: &Vm, a: Value, vb: &Vm, b: Value, seen: &mut HashMap<u32, u32>) -> Result<(), String> {
    let (ha, hb) = match (a, b) {
        (Value::Obj(ha), Value::Obj(hb)) => (ha, hb),
        (Value::Float(x), Value::Float(y)) if x.to_bits() == y.to_bits() => return Ok(()),
        (Value::Nil, Value::Nil) => return Ok(()),
        (Value::Bool(x), Value::Bool(y)) if x == y => return Ok(()),
        (Value::Int(x), Value::Int(y)) if x == y => return Ok(()),
        _ => return Err(format!("{a:?} is not {b:?}")),
    };
    if let Some(&was) = seen.get(&ha.0) {
        return if was == hb.0 { Ok(()) } else { Err("a shared part was copied twice".into()) };
    }
    seen.insert(ha.0, hb.0);
    match (va.heap.get(ha), vb.heap.get(hb)) {
        (Obj::Str(x), Obj::Str(y)) if x.s.as_str() == y.s.as_str() && x.chars() == y.chars() => Ok(()),
        (Obj::Bytes(x), Obj::Bytes(y)) if x == y => Ok(()),
        (Obj::Range(a0, a1), Obj::Range(b0, b1)) if (a0, a1) == (b0, b1) => Ok(()),
        (Obj::List(x), Obj::List(y)) if x.len() == y.len() => {
            x.iter().zip(y.iter()).try_for_each(|(&p, &q)| same(va, p, vb, q, seen))
        }
        (Obj::Map(x), Obj::Map(y)) if x.len() == y.len() => {
            x.iter().zip(y.iter()).try_for_each(|((kx, &p), (ky, &q))| {
                if kx != ky {
                    return Err("map keys differ".into());
                }
                same(va, p, vb, q, seen)
            })
        }
        (Obj::Error(x), Obj::Error(y))
            if x.message == y.message && x.trace == y.trace && x.kind == y.kind && x.others.len() == y.others.len() =>
        {
            x.others.iter().zip(&y.others).try_for_each(|(&p, &q)| same(va, p, vb, q, seen))
        }
        (x, y) => Err(format!("a {} became a {}", x.type_name(), y.type_name())),
    }
}

#[test]
fn any_copyable_value_equals_its_copy_and_shares_nothing() {
    for seed in 0..400 {
        let mut from = crate::natives::vm();
        let template = crate::vm::map::Layout::of([Key::Str("x".into()), Key::Int(7), Key::Nil]);
        let mut g = Gen { rng: Rng::new(seed), made: Vec::new(), template };
        let values: Vec<Value> = (0..3).map(|_| g.value(&mut from, 4, &mut Vec::new())).collect();
        let mut packet =
            pack(&mut from, &values, &String::new).unwrap_or_else(|c| panic!("seed {seed}: {}", c.message()));
        // Into another isolate's heap, and into the same heap: equal, and
        // in the same heap, made only of new objects.
        let mut to = crate::natives::vm();
        let there = unpack(&mut to, &mut packet).expect("unpacks").values;
        let before = from.heap.count();
        let here = unpack(&mut from, &mut packet).expect("unpacks").values;
        for (i, &v) in values.iter().enumerate() {
            same(&from, v, &to, there[i], &mut HashMap::new()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let mut seen = HashMap::new();
            same(&from, v, &from, here[i], &mut seen).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let originals: HashSet<u32> = seen.keys().copied().collect();
            let shared = seen.values().filter(|c| originals.contains(c)).count();
            // Short strings are interned (one object per text), and immutable.
            let interned = seen
                .iter()
                .filter(|(&o, &c)| o == c && matches!(from.heap.get(Handle(o)), Obj::Str(s) if s.s.len() <= 40))
                .count();
            assert_eq!(shared, interned, "seed {seed}: the copy shares {shared} objects with the original");
        }
        assert!(from.heap.count() >= before);
    }
}

#[test]
fn what_cannot_cross_is_named_with_its_place() {
    let mut vm = crate::natives::vm();
    let m = crate::sched::ops::new_mutex(&mut vm);
    let mut fields = new_map(1);
    fields.insert(Key::Str("lock".into()), m);
    let map = Value::Obj(vm.heap.alloc(Obj::Map(fields)));
    let list = vm.heap.list(vec![Value::Int(1), map]);
    let e = pack(&mut vm, &[Value::Nil, list], &String::new).expect_err("a mutex does not cross");
    assert_eq!(e.message(), "a mutex cannot cross to another isolate (at argument 2[1].lock)");
}

/// A script's text is made once per sending isolate: each crossing shares
/// it (no copy, hash or comparison of the whole script per crossing).
#[test]
fn a_scripts_text_is_shared_by_its_crossings() {
    let mut vm = crate::natives::vm();
    let out = crate::runner::run_source(&mut vm, "t.csp", "fn f(x) { return x }\n", false);
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    let f = vm.globals[*vm.global_names.get("f").expect("f is a global") as usize];
    let texts: Vec<_> = (0..2)
        .map(|_| match &pack(&mut vm, &[f], &String::new).expect("a function crosses").units[..] {
            [super::units::Unit::Script { src, .. }] => src.src.clone(),
            other => panic!("units {other:?}"),
        })
        .collect();
    assert!(std::sync::Arc::ptr_eq(&texts[0], &texts[1]));
    assert_eq!(&*texts[0], "fn f(x) { return x }\n");
}
