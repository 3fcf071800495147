//! The pprof profile format (profile.proto, as Go's `runtime/pprof` writes it),
//! encoded by hand: a string table with "" at index 0, functions, locations
//! (one per function and line), samples merged by stack and labels, gzipped.
//! Small enough that a protobuf library would be the bigger part.

use std::collections::HashMap;
use std::io::Write;

/// A sample's label: a string (`fiber`) or a number (`fiber_id`).
#[derive(Clone, PartialEq, Eq)]
pub enum Label {
    Str(i64, i64),
    Num(i64, i64),
}

/// Writes into `key` a stack and labels as one sequence: the stack's length,
/// its ids, then three numbers per label.
fn sample_key(key: &mut Vec<u64>, stack: &[u64], labels: &[Label]) {
    key.clear();
    key.push(stack.len() as u64);
    key.extend_from_slice(stack);
    for l in labels {
        let (tag, k, v) = match *l {
            Label::Str(k, v) => (0, k, v),
            Label::Num(k, v) => (1, k, v),
        };
        key.extend([tag, k as u64, v as u64]);
    }
}

/// A profile being built: everything is interned as it is added, so a sample
/// costs a few hash lookups.
pub struct Pprof {
    strings: Vec<String>,
    string_ids: HashMap<String, i64>,
    /// (name, file, start line) of each function; its id is its index + 1.
    functions: Vec<(i64, i64, i64)>,
    function_ids: HashMap<(i64, i64, i64), u64>,
    /// (function id, line) of each location; its id is its index + 1.
    locations: Vec<(u64, i64)>,
    location_ids: HashMap<(u64, i64), u64>,
    /// Values per (stack, innermost first, and labels), in the order first seen.
    samples: Vec<(Vec<u64>, Vec<Label>, Vec<i64>)>,
    /// Each sample's index by its stack and labels as one flat key
    /// (`sample_key`): a sample already there is found without allocating.
    sample_ids: foldhash::HashMap<Vec<u64>, usize>,
    key: Vec<u64>,
    /// The key of the last sample added and its index: a run of samples of
    /// one stack (a thousand fibers woken from one `wait`) skips the hashing.
    last: (Vec<u64>, usize),
    /// (type, unit) string ids of each value of a sample.
    sample_types: Vec<(i64, i64)>,
    period_type: (i64, i64),
    period: i64,
    default_type: i64,
}

impl Pprof {
    /// A profile whose samples hold a value per `(type, unit)` of `types`;
    /// `period` is in the unit of `types[period_of]`, which pprof shows first.
    pub fn new(types: &[(&str, &str)], period_of: usize, period: i64) -> Pprof {
        let mut p = Pprof {
            strings: vec![String::new()],
            string_ids: HashMap::from([(String::new(), 0)]),
            functions: Vec::new(),
            function_ids: HashMap::new(),
            locations: Vec::new(),
            location_ids: HashMap::new(),
            samples: Vec::new(),
            sample_ids: Default::default(),
            key: Vec::new(),
            last: (Vec::new(), 0),
            sample_types: Vec::new(),
            period_type: (0, 0),
            period,
            default_type: 0,
        };
        p.sample_types = types.iter().map(|(t, u)| (p.string(t), p.string(u))).collect();
        p.period_type = p.sample_types[period_of];
        p.default_type = p.period_type.0;
        p
    }

    /// The string table index of `s`.
    pub fn string(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.string_ids.get(s) {
            return i;
        }
        let i = self.strings.len() as i64;
        self.strings.push(s.to_string());
        self.string_ids.insert(s.to_string(), i);
        i
    }

    /// The id of the location at `line` of function `name` (in `file`, starting
    /// at `start_line`).
    pub fn location(&mut self, name: &str, file: &str, start_line: i64, line: i64) -> u64 {
        let key = (self.string(name), self.string(file), start_line);
        let next = self.functions.len() as u64 + 1;
        let f = *self.function_ids.entry(key).or_insert(next);
        if f == next {
            self.functions.push(key);
        }
        let next = self.locations.len() as u64 + 1;
        let l = *self.location_ids.entry((f, line)).or_insert(next);
        if l == next {
            self.locations.push((f, line));
        }
        l
    }

    /// Adds `values` (one per sample type) to the sample of this stack
    /// (location ids, innermost first) and labels.
    pub fn add(&mut self, stack: &[u64], labels: &[Label], values: &[i64]) {
        sample_key(&mut self.key, stack, labels);
        let i = if self.key == self.last.0 {
            self.last.1
        } else {
            let i = match self.sample_ids.get(self.key.as_slice()) {
                Some(&i) => i,
                None => {
                    self.sample_ids.insert(self.key.clone(), self.samples.len());
                    self.samples.push((stack.to_vec(), labels.to_vec(), vec![0; values.len()]));
                    self.samples.len() - 1
                }
            };
            std::mem::swap(&mut self.key, &mut self.last.0);
            self.last.1 = i;
            i
        };
        self.samples[i].2.iter_mut().zip(values).for_each(|(a, b)| *a += b);
    }

    /// The profile message (not compressed); `time_nanos` is when it began
    /// (Unix time), `duration_nanos` how long it covers.
    pub fn encode(&self, time_nanos: i64, duration_nanos: i64) -> Vec<u8> {
        let mut out = Vec::new();
        for &(t, u) in &self.sample_types {
            message(&mut out, 1, &value_type(t, u));
        }
        for (stack, labels, values) in &self.samples {
            let mut m = Vec::new();
            packed(&mut m, 1, stack.iter().copied());
            packed(&mut m, 2, values.iter().map(|&v| v as u64));
            for l in labels {
                let mut lm = Vec::new();
                match *l {
                    Label::Str(k, s) => {
                        int(&mut lm, 1, k as u64);
                        int(&mut lm, 2, s as u64);
                    }
                    Label::Num(k, n) => {
                        int(&mut lm, 1, k as u64);
                        int(&mut lm, 3, n as u64);
                    }
                }
                message(&mut m, 3, &lm);
            }
            message(&mut out, 2, &m);
        }
        message(&mut out, 3, &self.mapping());
        for (i, &(f, line)) in self.locations.iter().enumerate() {
            let mut m = Vec::new();
            int(&mut m, 1, i as u64 + 1);
            int(&mut m, 2, 1);
            let mut lm = Vec::new();
            int(&mut lm, 1, f);
            int(&mut lm, 2, line as u64);
            message(&mut m, 4, &lm);
            message(&mut out, 4, &m);
        }
        for (i, &(name, file, start)) in self.functions.iter().enumerate() {
            let mut m = Vec::new();
            int(&mut m, 1, i as u64 + 1);
            // No system name: pprof would take the name for a demangled C++
            // one and strip `<...>` from `<main>` and `<fn at ...>`.
            int(&mut m, 2, name as u64);
            int(&mut m, 4, file as u64);
            int(&mut m, 5, start as u64);
            message(&mut out, 5, &m);
        }
        for s in &self.strings {
            bytes(&mut out, 6, s.as_bytes());
        }
        int(&mut out, 9, time_nanos as u64);
        int(&mut out, 10, duration_nanos as u64);
        message(&mut out, 11, &value_type(self.period_type.0, self.period_type.1));
        int(&mut out, 12, self.period as u64);
        int(&mut out, 14, self.default_type as u64);
        out
    }

    /// The one mapping every location is in: it says the locations already
    /// have functions, files and lines, so pprof looks for no binary to
    /// symbolize them with.
    fn mapping(&self) -> Vec<u8> {
        let mut m = Vec::new();
        int(&mut m, 1, 1);
        for field in [7, 8, 9] {
            int(&mut m, field, 1);
        }
        m
    }

    /// The gzipped profile, as `go tool pprof` reads it.
    pub fn gzipped(&self, time_nanos: i64, duration_nanos: i64) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&self.encode(time_nanos, duration_nanos)).expect("writing to a Vec");
        gz.finish().expect("writing to a Vec")
    }
}

fn value_type(t: i64, u: i64) -> Vec<u8> {
    let mut m = Vec::new();
    int(&mut m, 1, t as u64);
    int(&mut m, 2, u as u64);
    m
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint field; zero is left out (proto3's default).
fn int(out: &mut Vec<u8>, field: u32, v: u64) {
    if v != 0 {
        varint(out, u64::from(field) << 3);
        varint(out, v);
    }
}

/// A length-delimited field: bytes, a string, a message or packed numbers.
fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    varint(out, u64::from(field) << 3 | 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn message(out: &mut Vec<u8>, field: u32, m: &[u8]) {
    bytes(out, field, m);
}

fn packed(out: &mut Vec<u8>, field: u32, vs: impl Iterator<Item = u64>) {
    let mut b = Vec::new();
    vs.for_each(|v| varint(&mut b, v));
    bytes(out, field, &b);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_little_endian_groups_of_seven_bits() {
        let mut v = Vec::new();
        varint(&mut v, 1);
        varint(&mut v, 300);
        varint(&mut v, u64::MAX);
        assert_eq!(v[..3], [1, 0xac, 0x02]);
        assert_eq!(v.len(), 3 + 10);
    }

    #[test]
    fn strings_functions_locations_and_samples_are_interned() {
        let mut p = Pprof::new(&[("samples", "count"), ("cpu", "nanoseconds")], 1, 10);
        assert_eq!(p.strings[..5], ["", "samples", "count", "cpu", "nanoseconds"]);
        let a = p.location("hot", "main.csp", 1, 3);
        let b = p.location("hot", "main.csp", 1, 4);
        assert_eq!((a, b, p.location("hot", "main.csp", 1, 3)), (1, 2, 1));
        assert_eq!(p.functions.len(), 1);
        let fiber = p.string("fiber");
        let main = p.string("main");
        p.add(&[a], &[Label::Str(fiber, main)], &[1, 10]);
        p.add(&[a], &[Label::Str(fiber, main)], &[2, 20]);
        p.add(&[b, a], &[], &[1, 10]);
        // Back to a sample added before the last one.
        p.add(&[a], &[Label::Str(fiber, main)], &[4, 40]);
        p.add(&[b, a], &[], &[1, 10]);
        assert_eq!(p.samples.len(), 2);
        assert_eq!(p.samples[0].2, [7, 70]);
        assert_eq!(p.samples[1].2, [2, 20]);
    }

    #[test]
    fn the_message_starts_with_its_sample_types() {
        let p = Pprof::new(&[("samples", "count")], 0, 10);
        let m = p.encode(0, 0);
        // Field 1, length-delimited: ValueType { type: 1, unit: 2 }.
        assert_eq!(m[..6], [0x0a, 4, 0x08, 1, 0x10, 2]);
        // The string table: "" first.
        assert!(m.windows(2).any(|w| w == [0x32, 0]));
    }
}
