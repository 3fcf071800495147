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
        // SAFETY: getrandom writes at most `seed.len()` bytes into it.
        let n = unsafe { libc::getrandom(seed.as_mut_ptr().cast(), seed.len(), 0) };
        if n != seed.len() as isize {
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
