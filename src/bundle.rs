//! A standalone executable's payload (docs/build.md): the executable is this `csp`
//! binary with a payload appended — the program's module sources by the names
//! they were loaded under, and its packages' folders — then a trailer: the
//! payload's length and a magic marker. At start-up `own` reads the last
//! bytes of the running executable; with the marker there, `main` runs the
//! bundled entry instead of the command line. `csp build` itself is in
//! `bundle_build.rs`.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};

const MAGIC: &[u8; 16] = b"\0csp-bundle-v1\0\0";
const TRAILER: usize = 8 + MAGIC.len();

/// A program and every module it imports.
#[derive(Default, Debug, PartialEq)]
pub struct Bundle {
    /// The entry script's name, as `csp build` was given it.
    pub entry: String,
    /// Module sources by the file name the loader gives them.
    pub files: HashMap<String, String>,
    /// Package name → its folder when built (imports of `NAME/...` look there).
    pub packages: HashMap<String, String>,
}

fn put(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// The payload and trailer to append to an executable.
pub fn encode(b: &Bundle) -> Vec<u8> {
    let mut out = Vec::new();
    put(&mut out, &b.entry);
    let mut files: Vec<_> = b.files.iter().collect();
    files.sort();
    out.extend_from_slice(&(files.len() as u64).to_le_bytes());
    for (k, v) in files {
        put(&mut out, k);
        put(&mut out, v);
    }
    let mut pkgs: Vec<_> = b.packages.iter().collect();
    pkgs.sort();
    out.extend_from_slice(&(pkgs.len() as u64).to_le_bytes());
    for (k, v) in pkgs {
        put(&mut out, k);
        put(&mut out, v);
    }
    let len = out.len() as u64;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(MAGIC);
    out
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u64(&mut self) -> Option<u64> {
        let (n, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*n))
    }
    fn str(&mut self) -> Option<String> {
        let n = usize::try_from(self.u64()?).ok()?;
        if n > self.0.len() {
            return None;
        }
        let (s, rest) = self.0.split_at(n);
        self.0 = rest;
        String::from_utf8(s.to_vec()).ok()
    }
    fn map(&mut self) -> Option<HashMap<String, String>> {
        let n = self.u64()?;
        let mut m = HashMap::new();
        for _ in 0..n {
            let k = self.str()?;
            m.insert(k, self.str()?);
        }
        Some(m)
    }
}

/// A payload (without its trailer) read back.
pub fn decode(payload: &[u8]) -> Option<Bundle> {
    let mut r = Reader(payload);
    let entry = r.str()?;
    let files = r.map()?;
    let packages = r.map()?;
    Some(Bundle { entry, files, packages })
}

/// The bundle appended to the running executable, if any: one read of its
/// last bytes for a plain `csp`.
pub fn own() -> Option<Bundle> {
    let mut f = std::fs::File::open("/proc/self/exe").ok()?;
    let size = f.seek(SeekFrom::End(0)).ok()?;
    if size < TRAILER as u64 {
        return None;
    }
    f.seek(SeekFrom::End(-(TRAILER as i64))).ok()?;
    let mut tail = [0u8; TRAILER];
    f.read_exact(&mut tail).ok()?;
    if &tail[8..] != MAGIC {
        return None;
    }
    let len = u64::from_le_bytes(tail[..8].try_into().ok()?);
    if len > size - TRAILER as u64 {
        return Some(Bundle::default());
    }
    f.seek(SeekFrom::End(-(TRAILER as i64) - len as i64)).ok()?;
    let mut payload = vec![0u8; usize::try_from(len).ok()?];
    // A marker with a payload that does not decode: an empty bundle, which
    // `main` reports as damaged rather than running as a plain `csp`.
    Some(f.read_exact(&mut payload).ok().and_then(|_| decode(&payload)).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut b = Bundle { entry: "app.csp".into(), ..Bundle::default() };
        b.files.insert("app.csp".into(), "print(1)\n".into());
        b.files.insert("lib/u.csp".into(), "let x = \"é\"\n".into());
        b.packages.insert("p".into(), "/c/src/git-1".into());
        let bytes = encode(&b);
        assert_eq!(&bytes[bytes.len() - 16..], MAGIC);
        let back = decode(&bytes[..bytes.len() - TRAILER]).unwrap();
        assert_eq!(back, b);
        assert!(decode(&bytes[..10]).is_none());
    }
}
