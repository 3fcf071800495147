//! The random generator behind `random` and `select`'s choices.

/// xorshift64*: small, fast and seedable so runs repeat.
pub struct Rng(u64);

impl Rng {
    /// `select`'s seed when `--seed` is not given.
    pub const DEFAULT_SEED: u64 = 0x5eed;

    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Seeded from the operating system's random source (the clock and the
    /// process id if that fails), different on every run.
    pub fn from_os() -> Rng {
        let mut seed = [0u8; 8];
        if !os_random(&mut seed) {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            seed = (t.as_nanos() as u64 ^ (std::process::id() as u64) << 32).to_le_bytes();
        }
        Rng::new(u64::from_le_bytes(seed))
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform float in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Fills `buf` from the kernel's random source; false if that failed.
#[cfg(target_os = "linux")]
fn os_random(buf: &mut [u8; 8]) -> bool {
    // SAFETY: getrandom writes at most `buf.len()` bytes into it.
    unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) == buf.len() as isize }
}

/// Elsewhere than Linux: std's hasher keys, which std draws from the
/// system's random source.
#[cfg(not(target_os = "linux"))]
fn os_random(buf: &mut [u8; 8]) -> bool {
    use std::hash::BuildHasher;
    *buf = std::collections::hash_map::RandomState::new().hash_one(std::process::id()).to_le_bytes();
    true
}
