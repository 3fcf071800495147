//! Resource limits that turn runaway programs into clean runtime errors.

/// Longest string, in bytes.
pub const MAX_STRING: usize = 1 << 28;
/// Most items in one list.
pub const MAX_LIST: usize = 1 << 27;
/// Deepest call stack, in frames; deeper is a catchable stack-overflow error.
pub const MAX_FRAMES: usize = 200_000;
/// Deepest nesting that printing, equality and JSON walk before giving up.
pub const MAX_DEPTH: usize = 2_000;
/// Live heap bytes beyond which allocation fails with an out-of-memory error.
pub const MAX_HEAP: usize = 8 << 30;
