//! std/crypto and std/hash against Python's `hmac`, `hashlib`, `zlib` and
//! `uuid`: csp computes, Python recomputes from the same inputs and checks.
//! Needs `python3`; without it the test says what it skipped and passes,
//! unless `CI` is set: then it fails.

mod common;
use common::{have, ok, Script};

#[test]
fn python_agrees_on_hmac_digests_crc_and_uuids() {
    if !have("python3", "the Python crypto test", "install it (Debian: apt-get install python3)") {
        return;
    }
    let py = Script::new(
        "check.py",
        r#"
import hashlib, hmac, json, sys, uuid, zlib, time
cases = json.load(open(sys.argv[1]))
bad = 0
for c in cases["macs"]:
    key, msg = bytes.fromhex(c["key"]), bytes.fromhex(c["msg"])
    for alg in ("sha256", "sha512", "sha1", "md5"):
        if hmac.new(key, msg, alg).hexdigest() != c[alg]:
            bad += 1
            print("hmac", alg, c["key"], c["msg"])
    for alg in ("sha1", "sha256", "sha512", "md5"):
        if hashlib.new(alg, msg).hexdigest() != c["d_" + alg]:
            bad += 1
            print("digest", alg, c["msg"])
    if zlib.crc32(msg) != c["crc32"]:
        bad += 1
        print("crc32", c["msg"])
now = time.time() * 1000
last = None
for s in cases["v7"]:
    u = uuid.UUID(s)
    ms = u.int >> 80
    if u.version != 7 or u.variant != uuid.RFC_4122 or str(u) != s or abs(ms - now) > 60000:
        bad += 1
        print("uuid7", s)
    if last is not None and not (u.int > last):
        bad += 1
        print("uuid7 order", s)
    last = u.int
for s in cases["v4"]:
    u = uuid.UUID(s)
    if u.version != 4 or u.variant != uuid.RFC_4122 or str(u) != s:
        bad += 1
        print("uuid4", s)
# Random bytes: every value turns up about as often as the others.
data = bytes.fromhex(cases["random"])
counts = [0] * 256
for b in data:
    counts[b] += 1
expected = len(data) / 256
chi2 = sum((c - expected) ** 2 / expected for c in counts)
if chi2 > 400:   # 255 degrees of freedom: the 99.999th percentile is near 370
    bad += 1
    print("random bytes look skewed", chi2)
print("checked", len(cases["macs"]), len(cases["v7"]), len(cases["v4"]), "bad", bad)
"#,
    );
    let data = Script::new("cases.json", "");
    let src = format!(
        r#"
import "std/crypto"
import "std/hash"
import "std/fs"
import "std/proc"
let macs = []
for i in range(200) {{
    // Keys and messages of every length around the hash block sizes (64, 128).
    let key = crypto.random_bytes(i % 150)
    let msg = crypto.random_bytes((i * 37) % 300)
    let c = {{key: key.hex(), msg: msg.hex(), crc32: hash.crc32(msg)}}
    for alg in ["sha256", "sha512", "sha1", "md5"] {{
        c[alg] = crypto.hmac(alg, key, msg, "hex")
    }}
    c["d_sha1"] = hash.sha1(msg)
    c["d_sha256"] = crypto.sha256(msg)
    c["d_sha512"] = hash.sha512(msg)
    c["d_md5"] = hash.md5(msg)
    macs.push(c)
}}
let cases = {{
    macs: macs,
    v7: [crypto.uuid7() for i in range(5000)],
    v4: [crypto.uuid4() for i in range(1000)],
    random: crypto.random_bytes(1 << 20).hex(),
}}
fs.write("{data}", json_encode(cases))
print(proc.output(["python3", "{py}", "{data}"]).trim())
"#,
        py = py.path(),
        data = data.path()
    );
    assert_eq!(ok("crypto_python", &src), "checked 200 5000 1000 bad 0\n");
}
