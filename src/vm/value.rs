//! The 16-byte `Copy` value every register and container slot holds.

use super::host::{Class, Method};
use super::Str;
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

pub use super::map::{Layout, Map};

/// A new empty map.
pub fn new_map(capacity: usize) -> Map {
    Map::with_capacity(capacity)
}

/// Builds foldhash's fast hasher with this process's seed. Map keys can come
/// from the network, so a fixed hash (Fx) would let a peer send keys that all
/// collide and make each insert linear; with a seed chosen from OS randomness at
/// start-up, colliding keys cannot be computed in advance. foldhash rather than
/// ahash: as fast or faster on short keys without AES instructions, and no
/// dependencies. Zero-sized, so a map is no bigger than with Fx.
#[derive(Default, Clone, Copy, Debug)]
pub struct MapHasher;

/// The process's seeds: foldhash's per-hasher seed and shared seed.
struct Seeds(u64, foldhash::SharedSeed);

fn seeds() -> &'static Seeds {
    // Shared by every isolate: one seed per process, read-only once made.
    static SEEDS: std::sync::OnceLock<Seeds> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        // std's RandomState keys come from the OS's random source.
        use std::hash::{BuildHasher, Hasher};
        let random = || std::collections::hash_map::RandomState::new().build_hasher().finish();
        Seeds(random(), foldhash::SharedSeed::from_u64(random()))
    })
}

impl std::hash::BuildHasher for MapHasher {
    type Hasher = foldhash::fast::FoldHasher<'static>;
    #[inline]
    fn build_hasher(&self) -> Self::Hasher {
        let s = seeds();
        foldhash::fast::FoldHasher::with_seed(s.0, &s.1)
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
    Str(Str),
    Bytes(Rc<[u8]>),
}

impl Key {
    /// Is this the string key `s`?
    #[inline]
    pub fn is_str(&self, s: &str) -> bool {
        matches!(self, Key::Str(k) if &**k == s)
    }
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

/// The payload of a value known to be an int (the second word, see `Value`).
///
/// # Safety
/// `p` must be valid and aligned for a `Value` that is a `Value::Int`.
#[inline(always)]
pub unsafe fn int_payload(p: *const Value) -> i64 {
    *(p as *const i64).add(1)
}

/// Sets the payload of a value known to be an int, leaving its tag.
///
/// # Safety
/// As for `int_payload`.
#[inline(always)]
pub unsafe fn set_int_payload(p: *mut Value, i: i64) {
    *(p as *mut i64).add(1) = i;
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
            (Key::Str(a), Key::Str(b)) => a == b,
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
            for (i, mk) in m.keys().enumerate() {
                if let Key::Str(s) = mk {
                    if Str::ptr_eq(s, k) {
                        return Some(i);
                    }
                }
            }
        }
    }
    m.get_index_of(key)
}

/// A field or method name of a Proto (the operand of Field, SetField and
/// Invoke) with its inline cache: the layout of the map it was last found in
/// and its index there. Maps made by one literal share a layout, so the
/// check is one compare of the layout's address with the map's; a map of
/// another layout with the name at the same index (objects built alike)
/// hits too, after a look at its key. Always a string key, which `new`
/// makes sure of, so that look reads the string without checking the key's
/// tag.
///
/// The cache holds its layout (`kept`), so that address names no other
/// layout while cached, and the layout, shared, never changes in place: a
/// map whose keys change gets a copy (map.rs, `keys_mut`). The address, not
/// the layout's id, because the id is one load further from the map (a
/// field read waits on that chain of loads; NBody).
pub struct Name {
    key: Key,
    layout: std::cell::Cell<usize>,
    kept: std::cell::Cell<Option<std::rc::Rc<Layout>>>,
    /// Where the name's value is in a map of the cached layout: its index
    /// times the size of a value, so a hit adds it to the values' address
    /// as it is.
    offset: std::cell::Cell<u32>,
    /// The method of a host class last called through this name: a call
    /// site's method is looked up by name once, not at every call.
    method: std::cell::Cell<Option<(&'static Class, Method)>>,
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Name").field("key", &self.key).field("offset", &self.offset).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<class {}>", self.name)
    }
}

impl Name {
    pub fn new(s: Str) -> Name {
        // 0 matches no map (an `Rc` is never null).
        let (layout, kept, offset, method) = Default::default();
        Name { key: Key::Str(s), layout, kept, offset, method }
    }

    /// Caches `m`'s layout (and keeps it). Not a large one: a cache would
    /// keep a dictionary's keys alive after the dictionary (one layout per
    /// name, but each as large as its map).
    fn remember(&self, m: &Map) {
        const KEEP_MAX: usize = 1024;
        if m.len() > KEEP_MAX {
            self.layout.set(0);
            self.kept.set(None);
            return;
        }
        self.layout.set(m.layout_word());
        self.kept.set(Some(m.layout().clone()));
    }

    pub fn key(&self) -> &Key {
        &self.key
    }

    #[inline(always)]
    fn str(&self) -> &Str {
        match &self.key {
            Key::Str(s) => s,
            // SAFETY: `new` is the only constructor and the fields are private.
            _ => unsafe { std::hint::unreachable_unchecked() },
        }
    }

    /// The cached offset, when `m` has the cached layout. It is then below
    /// `m`'s length: the cached layout does not change (see the type), and a
    /// map has a value for every key of its layout (map.rs).
    #[inline(always)]
    fn hit(&self, m: &Map) -> Option<usize> {
        (m.layout_word() == self.layout.get()).then(|| self.offset.get() as usize)
    }

    /// The index of this name in `m` when the cache missed: searched for
    /// (and then cached). Another layout with the name at the same index (a
    /// site that sees objects of several literals, built alike) is found
    /// without a search.
    #[inline(never)]
    fn index_past_miss(&self, m: &Map) -> Option<usize> {
        let i = self.offset.get() as usize / std::mem::size_of::<Value>();
        if matches!(m.key_at(i), Some(Key::Str(k)) if Str::ptr_eq(k, self.str())) {
            self.remember(m);
            return Some(i);
        }
        self.index_missed(m)
    }

    /// This name's method in `class`.
    pub fn method_in(&self, class: &'static Class) -> Option<Method> {
        match self.method.get() {
            Some((c, m)) if std::ptr::eq(c, class) => Some(m),
            _ => {
                let m = class.method(self.str())?;
                self.method.set(Some((class, m)));
                Some(m)
            }
        }
    }

    #[inline(never)]
    fn index_missed(&self, m: &Map) -> Option<usize> {
        let found = map_slot(m, &self.key);
        if let Some(i) = found {
            self.remember(m);
            // A map too large for the offset is too large to cache (`remember`).
            self.offset.set(u32::try_from(i * std::mem::size_of::<Value>()).unwrap_or(0));
        }
        found
    }
}

/// The value of `name` in `m` (through its inline cache, see `Name`). A hit
/// reads the value at once: no bounds check, and no index shared with the
/// search's answer (that `Option<usize>` cost three instructions a read).
#[inline(always)]
pub fn cached_get<'m>(m: &'m Map, name: &Name) -> Option<&'m Value> {
    match name.hit(m) {
        // SAFETY: a hit's index is below the map's length (`Name::hit`).
        Some(off) => Some(unsafe { m.value_at_offset(off) }),
        None => m.value_at(name.index_past_miss(m)?),
    }
}

/// `cached_get`'s hit alone: None when `m` has another layout (or lacks
/// the name). Neither the search nor even the look at the cached index in
/// another layout: each costs the dispatch loop's fast paths registers
/// (`Field` saved three more), so they are left to the slow halves.
#[inline(always)]
pub fn cached_hit<'m>(m: &'m Map, name: &Name) -> Option<&'m Value> {
    // SAFETY: as for `cached_get`.
    name.hit(m).map(|off| unsafe { m.value_at_offset(off) })
}

/// `cached_hit` for changing the value.
#[inline(always)]
pub fn cached_hit_mut<'m>(m: &'m mut Map, name: &Name) -> Option<&'m mut Value> {
    // SAFETY: as for `cached_get`.
    name.hit(m).map(|off| unsafe { m.value_at_offset_mut(off) })
}

/// `cached_get` for changing the value.
#[inline(always)]
pub fn cached_get_mut<'m>(m: &'m mut Map, name: &Name) -> Option<&'m mut Value> {
    match name.hit(m) {
        // SAFETY: as for `cached_get`.
        Some(off) => Some(unsafe { m.value_at_offset_mut(off) }),
        None => {
            let i = name.index_past_miss(m)?;
            m.value_at_mut(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(per: u64, shared: &foldhash::SharedSeed, k: &Key) -> u64 {
        let mut h = foldhash::fast::FoldHasher::with_seed(per, shared);
        std::hash::Hash::hash(k, &mut h);
        std::hash::Hasher::finish(&h)
    }

    /// The same key hashes differently under two seeds, and this process's
    /// seed is neither foldhash's fixed one nor the same as another process's
    /// (a fresh draw from the same source differs).
    #[test]
    fn map_hashes_are_seeded() {
        let k = Key::Str("a network key".into());
        let (one, two) = (foldhash::SharedSeed::from_u64(1), foldhash::SharedSeed::from_u64(2));
        assert_ne!(hash(0, &one, &k), hash(0, &two, &k));
        assert_ne!(hash(1, &one, &k), hash(2, &one, &k));
        let ours = MapHasher.hash_one(&k);
        assert_eq!(ours, MapHasher.hash_one(&k), "stable within the process");
        assert_ne!(ours, hash(0, foldhash::SharedSeed::global_fixed(), &k));
        assert_ne!(seeds().0, 0);
    }
}
