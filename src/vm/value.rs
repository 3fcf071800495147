//! The 16-byte `Copy` value every register and container slot holds.

use std::rc::Rc;

/// An index into the heap's slot table; valid while the object is reachable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handle(pub u32);

/// `repr(C, u64)` fixes the layout at two 8-byte words (tag, payload), so the
/// dispatch loop can copy registers word by word (see `copy_value`).
#[derive(Clone, Copy, Debug)]
#[repr(C, u64)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Obj(Handle),
}

impl Value {
    #[inline]
    pub fn truthy(self) -> bool {
        !matches!(self, Value::Nil | Value::Bool(false))
    }
}

/// Maps: insertion ordered, hashed with `FxHasher`.
pub type Map = indexmap::IndexMap<Key, Value, std::hash::BuildHasherDefault<FxHasher>>;

/// A new empty map.
pub fn new_map(capacity: usize) -> Map {
    Map::with_capacity_and_hasher(capacity, Default::default())
}

/// The Fx hash (rustc's): a multiply-rotate per word. Keys are program data, not
/// attacker-chosen network input, so a fast non-cryptographic hash fits.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl std::hash::Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.add(i as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // hashbrown picks buckets from the low bits, which the last multiply mixes
        // least; rotating brings the well-mixed high bits down (as rustc-hash 2 does).
        self.0.rotate_left(26)
    }
}

/// A map key: maps accept nil, bool, int, string and bytes keys, compared by value
/// (a bytes key never equals a string key).
/// String keys made from source text are interned (`Vm::intern`), so equality
/// usually succeeds on the pointer before comparing bytes.
#[derive(Clone, Debug, Eq)]
pub enum Key {
    Nil,
    Bool(bool),
    Int(i64),
    Str(Rc<str>),
    Bytes(Rc<[u8]>),
}

/// Copies a value as two 8-byte loads and stores. A plain copy is one 16-byte load,
/// which stalls when the value was just written as separate tag and payload
/// stores (store-to-load forwarding fails); word copies forward cleanly.
///
/// # Safety
/// Both pointers must be valid and aligned for a `Value`.
#[inline(always)]
pub unsafe fn copy_value(dst: *mut Value, src: *const Value) {
    use std::mem::MaybeUninit;
    let s = src as *const MaybeUninit<u64>;
    let d = dst as *mut MaybeUninit<u64>;
    // Volatile loads keep LLVM from fusing the two words back into one wide load.
    let (tag, payload) = (s.read_volatile(), s.add(1).read_volatile());
    d.write(tag);
    d.add(1).write(payload);
}

/// Reads a value word by word (see `copy_value`).
///
/// # Safety
/// `src` must be valid and aligned for a `Value`.
#[inline(always)]
pub unsafe fn load_value(src: *const Value) -> Value {
    let mut out = std::mem::MaybeUninit::<Value>::uninit();
    copy_value(out.as_mut_ptr(), src);
    out.assume_init()
}

impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match self {
            Key::Nil => h.write_u8(0),
            Key::Bool(b) => h.write_u8(1 + *b as u8),
            Key::Int(i) => h.write_i64(*i),
            Key::Str(s) => s.hash(h),
            Key::Bytes(b) => {
                h.write_u8(3);
                b.hash(h)
            }
        }
    }
}

impl PartialEq for Key {
    #[inline]
    fn eq(&self, other: &Key) -> bool {
        match (self, other) {
            (Key::Str(a), Key::Str(b)) => Rc::ptr_eq(a, b) || **a == **b,
            (Key::Int(a), Key::Int(b)) => a == b,
            (Key::Bool(a), Key::Bool(b)) => a == b,
            (Key::Nil, Key::Nil) => true,
            (Key::Bytes(a), Key::Bytes(b)) => a == b,
            _ => false,
        }
    }
}

/// Entries a map may have for `map_slot` to scan them instead of hashing.
const SCAN_MAX: usize = 8;

/// Index of `key` in `m`. Small maps (objects with a few fields) are scanned for
/// the interned key pointer first, which is cheaper than hashing.
#[inline]
pub fn map_slot(m: &Map, key: &Key) -> Option<usize> {
    if let Key::Str(k) = key {
        if m.len() <= SCAN_MAX {
            for (i, (mk, _)) in m.iter().enumerate() {
                if let Key::Str(s) = mk {
                    if Rc::ptr_eq(s, k) {
                        return Some(i);
                    }
                }
            }
        }
    }
    m.get_index_of(key)
}
