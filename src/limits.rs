//! Resource limits that turn runaway programs into clean runtime errors.

/// Longest string, in bytes.
pub const MAX_STRING: usize = 1 << 28;
/// Most items in one list.
pub const MAX_LIST: usize = 1 << 25;
/// Deepest call stack, in frames; deeper is a catchable stack-overflow error.
pub const MAX_FRAMES: usize = 200_000;
/// Deepest nesting that JSON and list ordering walk before giving up.
pub const MAX_DEPTH: usize = 2_000;
/// Live heap bytes beyond which allocation fails with an out-of-memory error.
pub const MAX_HEAP: usize = 8 << 30;

/// Runs `f` with room on the stack, switching to a fresh heap-allocated segment when
/// little is left. Every recursion that follows the shape of user input (compiling
/// nested expressions, comparing nested lists) goes through here, so no input can
/// overflow the Rust stack, whatever stack the caller runs on.
#[inline]
pub fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, f)
}
