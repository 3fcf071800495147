//! Resource limits that turn runaway programs into clean runtime errors.

/// Longest string, in bytes.
pub const MAX_STRING: usize = 1 << 28;
/// Most items in one list.
pub const MAX_LIST: usize = 1 << 25;
/// Deepest call stack, in frames; deeper is a catchable stack-overflow error.
pub const MAX_FRAMES: usize = 200_000;
/// Deepest nesting that JSON and list ordering walk before giving up.
pub const MAX_DEPTH: usize = 2_000;
/// `--max-memory` when neither the flag nor the machine says otherwise.
pub const MAX_HEAP: usize = 8 << 30;

/// What the allocator takes for a block of `n` bytes (glibc's: an 8-byte
/// header, 16-byte steps, 32 at least), so records counted against
/// `--max-memory` count what is really used.
pub const fn malloc_size(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let c = (n + 8 + 15) & !15;
    if c < 32 {
        32
    } else {
        c
    }
}

/// Bytes as people read them: `512 B`, `64.0 MB`, `1.5 GB` (powers of 1024).
pub fn show_bytes(n: usize) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut x = n as f64 / 1024.0;
    let mut unit = 0;
    while x >= 1024.0 && unit < UNITS.len() - 1 {
        x /= 1024.0;
        unit += 1;
    }
    format!("{x:.1} {}", UNITS[unit])
}

/// Reads a size: bytes, or with a unit `K`, `M`, `G`, `T` (powers of 1024,
/// optionally followed by `B`/`iB`, any case): `512M`, `2GB`, `1.5g`.
pub fn parse_bytes(s: &str) -> Option<usize> {
    let bytes = with_unit(s.trim(), |unit| match unit.to_ascii_lowercase().as_str() {
        "" | "b" => Some(1.0),
        "k" | "kb" | "kib" => Some(1024.0),
        "m" | "mb" | "mib" => Some(1024.0 * 1024.0),
        "g" | "gb" | "gib" => Some(1024.0 * 1024.0 * 1024.0),
        "t" | "tb" | "tib" => Some(1024.0 * 1024.0 * 1024.0 * 1024.0),
        _ => None,
    })?;
    (1.0..usize::MAX as f64).contains(&bytes).then_some(bytes as usize)
}

/// Reads a time in milliseconds: a plain number, or one with a unit (`ms`,
/// `s`, `m`, `h`), as Go's `-timeout 30s` reads.
pub fn parse_millis(s: &str) -> Option<u64> {
    let ms = with_unit(s, |unit| match unit {
        "" | "ms" => Some(1.0),
        "s" => Some(1e3),
        "m" => Some(60e3),
        "h" => Some(3600e3),
        _ => None,
    })?;
    (1.0..1e15).contains(&ms).then_some(ms as u64)
}

/// A positive number followed by a unit, times the unit's `scale`.
fn with_unit(s: &str, scale: impl Fn(&str) -> Option<f64>) -> Option<f64> {
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok().filter(|n: &f64| n.is_finite() && *n > 0.0)?;
    Some(n * scale(unit)?)
}

/// The default `--max-memory`: half of what the machine can give (physical
/// memory, or the control group's limit when lower), as the process's resident
/// size runs up to about twice what the heap counts (allocator rounding, the
/// object table's spare room); an eighth of an address-space or data limit
/// (`ulimit -v`/`-d`), which also covers code, thread stacks, the allocator's
/// reservations and a growing table's old and new copies.
pub fn default_max_memory() -> usize {
    let mut limit = physical_memory().map_or(MAX_HEAP, |m| m / 2);
    if let Some(c) = cgroup_memory() {
        limit = limit.min(c / 2);
    }
    for res in [libc::RLIMIT_AS, libc::RLIMIT_DATA] {
        let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes into the struct we pass.
        if unsafe { libc::getrlimit(res, &mut r) } == 0 && r.rlim_cur != libc::RLIM_INFINITY {
            limit = limit.min(r.rlim_cur as usize / 8);
        }
    }
    limit
}

fn physical_memory() -> Option<usize> {
    // SAFETY: sysconf only reads system configuration.
    let (pages, size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    (pages > 0 && size > 0).then(|| pages as usize * size as usize)
}

/// The cgroup v2 (or v1) memory limit of this process's group, if it has one.
fn cgroup_memory() -> Option<usize> {
    ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .find_map(|s| s.trim().parse::<usize>().ok())
        .filter(|&n| n < 1 << 50)
}

/// Runs `f` with room on the stack, switching to a fresh heap-allocated segment when
/// little is left. Every recursion that follows the shape of user input (compiling
/// nested expressions, comparing nested lists) goes through here, so no input can
/// overflow the Rust stack, whatever stack the caller runs on.
#[inline]
pub fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_and_print_in_powers_of_1024() {
        assert_eq!(parse_bytes("512"), Some(512));
        assert_eq!(parse_bytes("64M"), Some(64 << 20));
        assert_eq!(parse_bytes("2GB"), Some(2 << 30));
        assert_eq!(parse_bytes("1.5g"), Some(3 << 29));
        assert_eq!(parse_bytes("10KiB"), Some(10 << 10));
        for bad in ["", "M", "0", "-1G", "1X", "nan", "1e400"] {
            assert_eq!(parse_bytes(bad), None, "{bad}");
        }
        assert_eq!(parse_millis("250"), Some(250));
        assert_eq!(parse_millis("30s"), Some(30_000));
        assert_eq!(parse_millis("1.5m"), Some(90_000));
        for bad in ["", "0", "5 parsecs", "2d", "-1s"] {
            assert_eq!(parse_millis(bad), None, "{bad}");
        }
        assert_eq!(show_bytes(100), "100 B");
        assert_eq!(show_bytes(64 << 20), "64.0 MB");
        assert_eq!(show_bytes(3 << 29), "1.5 GB");
    }

    #[test]
    fn the_default_memory_limit_is_below_physical_memory() {
        let m = default_max_memory();
        assert!(m > 0);
        if let Some(p) = physical_memory() {
            assert!(m <= p / 2);
        }
    }
}
