//! `std/crypto` (docs/crypto.md): random bytes from the operating system,
//! UUIDs (versions 4 and 7), HMAC and constant-time comparison. The digests it
//! also offers are std/hash's (`natives/text/codec.rs`).

use super::args::arity;
use super::bytes::{check_len, data_arg};
use super::text::codec::{digest_output, output};
use crate::vm::builtin::io_kind;
use crate::vm::{err, ErrorKind, Fiber, NativeFn, Res, Ret, Value, Vm};
use hmac::{Mac, SimpleHmac};
use std::sync::Mutex;

pub fn register(vm: &mut Vm) {
    vm.define_hidden("crypto.random_bytes", NativeFn::Full(random_bytes));
    vm.define_hidden("crypto.uuid4", NativeFn::Value(uuid4));
    vm.define_hidden("crypto.uuid7", NativeFn::Value(uuid7));
    vm.define_hidden("crypto.hmac", NativeFn::Value(hmac));
    vm.define_hidden("crypto.equal", NativeFn::Value(equal));
}

/// Random bytes past this many are made on the I/O pool.
const BIG: usize = 1 << 20;

/// Fills `buf` from the operating system's generator (getrandom(2)).
fn os_random(buf: &mut [u8]) -> Result<(), (ErrorKind, String)> {
    getrandom::getrandom(buf).map_err(|e| (ErrorKind::Io, format!("the operating system gave no random bytes: {e}")))
}

fn random_vec(n: usize) -> Res<Vec<u8>> {
    let mut buf = vec![0; n];
    os_random(&mut buf).or_else(|(k, m)| err(k, m))?;
    Ok(buf)
}

/// `crypto.random_bytes(n)`: `n` bytes from the operating system's
/// cryptographically secure generator (never the seeded one of `random()`).
fn random_bytes(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("crypto.random_bytes", args, 1, 1)?;
    let n = match args[0] {
        Value::Int(n) if n >= 0 => n as usize,
        Value::Int(n) => {
            return err(ErrorKind::Value, format!("crypto.random_bytes() count must not be negative, got {n}"))
        }
        v => {
            let t = vm.heap.type_name(v);
            return err(ErrorKind::Type, format!("crypto.random_bytes() needs an int count, not {t}"));
        }
    };
    check_len(n)?;
    vm.heap.reserve(n)?;
    if n < BIG {
        let buf = random_vec(n)?;
        return Ok(Ret::Value(vm.heap.bytes(buf)));
    }
    let work = move || {
        let mut buf = vec![0; n];
        os_random(&mut buf)?;
        Ok(buf)
    };
    Ok(io_kind(work, |heap, buf| heap.bytes(buf)))
}

/// A UUID's 16 bytes with its version and the RFC 9562 variant set, as text.
fn uuid_text(mut b: [u8; 16], version: u8) -> String {
    b[6] = (b[6] & 0x0f) | (version << 4);
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

/// `crypto.uuid4()`: a random UUID, as lowercase text.
fn uuid4(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("crypto.uuid4", args, 0, 0)?;
    let mut b = [0; 16];
    os_random(&mut b).or_else(|(k, m)| err(k, m))?;
    Ok(vm.heap.string(uuid_text(b, 4)))
}

/// The millisecond and 42-bit counter of the last version 7 UUID. Shared by
/// every VM of the process on purpose (UUIDs made by one process, whatever
/// isolate made them, sort in the order they were made); the mutex serialises them.
static LAST_V7: Mutex<(u64, u64)> = Mutex::new((0, 0));

/// `crypto.uuid7()`: a UUID whose first 48 bits are the Unix time in
/// milliseconds, so they sort by time. Within one millisecond a 42-bit counter
/// (started at a random value) keeps them increasing, as Python's
/// `uuid.uuid7()` does (RFC 9562, 6.2 method 1); 32 random bits follow.
fn uuid7(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("crypto.uuid7", args, 0, 0)?;
    let mut r = [0; 10];
    os_random(&mut r).or_else(|(k, m)| err(k, m))?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let fresh = |r: &[u8; 10]| u64::from_be_bytes([0, 0, r[4], r[5], r[6], r[7], r[8], r[9]]) & 0x1ff_ffff_ffff;
    const COUNTER_MAX: u64 = 0x3ff_ffff_ffff;
    let (ms, counter) = {
        let mut last = LAST_V7.lock().unwrap_or_else(|p| p.into_inner());
        let (mut ms, mut counter) = (now, fresh(&r));
        if now <= last.0 {
            // The clock stood still or went back: keep counting after the last one.
            ms = last.0;
            counter = last.1 + 1;
            if counter > COUNTER_MAX {
                ms += 1;
                counter = fresh(&r);
            }
        }
        *last = (ms, counter);
        (ms, counter)
    };
    let mut b = [0; 16];
    b[..6].copy_from_slice(&(ms & 0xffff_ffff_ffff).to_be_bytes()[2..]);
    // 12 bits of the counter after the version nibble, 30 after the variant bits.
    let hi = (counter >> 30) & 0x0fff;
    let lo = counter & 0x3fff_ffff;
    b[6..8].copy_from_slice(&(hi as u16).to_be_bytes());
    b[8..12].copy_from_slice(&(lo as u32).to_be_bytes());
    b[12..].copy_from_slice(&r[..4]);
    Ok(vm.heap.string(uuid_text(b, 7)))
}

/// `crypto.hmac(alg, key, msg, output = "bytes")`: the HMAC (RFC 2104) of
/// `msg` under `key` with the digest `alg` ("sha256", "sha512", "sha1", "md5"),
/// as bytes or, with "hex", lowercase hex.
fn hmac(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    const NAME: &str = "crypto.hmac";
    arity(NAME, args, 3, 4)?;
    let Some(alg) = vm.heap.as_str(args[0]).map(|s| s.s.clone()) else {
        let t = vm.heap.type_name(args[0]);
        return err(ErrorKind::Type, format!("{NAME}() needs the algorithm's name as a string, not {t}"));
    };
    let as_bytes = digest_output(vm, NAME, args.get(3), true)?;
    let key = data_arg(&vm.heap, NAME, args[1])?;
    let msg = data_arg(&vm.heap, NAME, args[2])?;
    fn mac<D: hmac::digest::Digest + hmac::digest::core_api::BlockSizeUser>(key: &[u8], msg: &[u8]) -> Vec<u8> {
        let mut m = <SimpleHmac<D> as Mac>::new_from_slice(key).expect("HMAC takes a key of any length");
        m.update(msg);
        m.finalize().into_bytes().to_vec()
    }
    let sum = match &*alg {
        "sha256" => mac::<sha2::Sha256>(key, msg),
        "sha512" => mac::<sha2::Sha512>(key, msg),
        "sha1" => mac::<sha1::Sha1>(key, msg),
        "md5" => mac::<md5::Md5>(key, msg),
        other => {
            let hint = match other.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
                a @ ("sha256" | "sha512" | "sha1" | "md5") => format!(" (write {a:?})"),
                _ => String::new(),
            };
            let msg = format!("{NAME}() algorithm is \"sha256\", \"sha512\", \"sha1\" or \"md5\", not {other:?}{hint}");
            return err(ErrorKind::Value, msg);
        }
    };
    output(vm, &sum, as_bytes)
}

/// `crypto.equal(a, b)`: whether two strings or bytes hold the same bytes, in
/// a time that depends only on their lengths, never on where they differ (for
/// comparing MACs and tokens; Python's `hmac.compare_digest`).
fn equal(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("crypto.equal", args, 2, 2)?;
    let a = data_arg(&vm.heap, "crypto.equal", args[0])?;
    let b = data_arg(&vm.heap, "crypto.equal", args[1])?;
    Ok(Value::Bool(bool::from(subtle::ConstantTimeEq::ct_eq(a, b))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_layout() {
        let s = uuid_text([0xff; 16], 4);
        assert_eq!(s, "ffffffff-ffff-4fff-bfff-ffffffffffff");
        let s = uuid_text([0; 16], 7);
        assert_eq!(s, "00000000-0000-7000-8000-000000000000");
    }

    #[test]
    fn uuid7_increases() {
        let mut vm = crate::natives::vm();
        let mut last = String::new();
        for _ in 0..2000 {
            let v = uuid7(&mut vm, &[]).unwrap();
            let s = vm.heap.as_str(v).unwrap().s.to_string();
            assert!(s > last, "{s} after {last}");
            last = s;
        }
    }
}
