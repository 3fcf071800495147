//! Text formats (docs/text-formats.md): `std/re` (regular expressions),
//! `std/base64`, `std/hash`, `std/csv` (`csv_stream.rs`: its reader and writer). `std/hex` is csp on the bytes methods.

pub mod codec;
pub mod csv;
pub mod csv_stream;
pub mod re;

use crate::vm::Vm;

pub fn register(vm: &mut Vm) {
    re::register(vm);
    codec::register(vm);
    csv::register(vm);
    csv_stream::register(vm);
}

use crate::vm::object::Obj;
use crate::vm::value::Map;
use crate::vm::{err, ErrorKind, Key, Res, Value};

/// The options map of `name` (a function's public name), whose keys must be
/// among `known` (a typo is a `value` error that suggests the closest).
pub(crate) struct Opts<'a> {
    name: &'a str,
    map: Option<Map>,
}

impl<'a> Opts<'a> {
    pub fn new(vm: &Vm, name: &'a str, v: Option<&Value>, known: &[&str]) -> Res<Opts<'a>> {
        let map = match v {
            None | Some(Value::Nil) => None,
            Some(Value::Obj(h)) if matches!(vm.heap.get(*h), Obj::Map(_)) => {
                let Obj::Map(m) = vm.heap.get(*h) else { unreachable!() };
                Some(m.clone())
            }
            Some(v) => {
                return err(ErrorKind::Type, format!("{name}() options need a map, not {}", vm.heap.type_name(*v)))
            }
        };
        for k in map.iter().flat_map(|m| m.keys()) {
            let Key::Str(k) = k else {
                return err(ErrorKind::Value, format!("{name}() options have string keys only"));
            };
            if !known.contains(&&**k) {
                let hint = match crate::suggest::closest(k, known.iter().copied()) {
                    Some(m) => format!("; did you mean '{m}'?"),
                    None => format!(" (it takes {})", known.join(", ")),
                };
                return err(ErrorKind::Value, format!("{name}() has no option '{k}'{hint}"));
            }
        }
        Ok(Opts { name, map })
    }

    fn get(&self, key: &str) -> Option<Value> {
        let v = self.map.as_ref()?.get(&Key::Str(key.into())).copied();
        v.filter(|v| !matches!(v, Value::Nil))
    }

    /// A bool option (`default` when missing or nil).
    pub fn bool(&self, vm: &Vm, key: &str, default: bool) -> Res<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(b),
            Some(v) => {
                err(ErrorKind::Type, format!("{}() option {key} needs a bool, not {}", self.name, vm.heap.type_name(v)))
            }
        }
    }

    /// A string option (None when missing or nil).
    pub fn str(&self, vm: &Vm, key: &str) -> Res<Option<crate::vm::Str>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match vm.heap.as_str(v) {
                Some(s) => Ok(Some(s.s.clone())),
                None => err(
                    ErrorKind::Type,
                    format!("{}() option {key} needs a string, not {}", self.name, vm.heap.type_name(v)),
                ),
            },
        }
    }

    /// Any option value (None when missing or nil).
    pub fn value(&self, key: &str) -> Option<Value> {
        self.get(key)
    }
}
