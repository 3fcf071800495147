//! An installed `csp` (`cargo install --path .`) is one file: a copy of the
//! binary run from elsewhere still imports the std modules, which `build.rs`
//! embeds.

use std::process::Command;

#[test]
fn a_relocated_binary_imports_std_modules_from_any_directory() {
    let tmp = std::env::temp_dir().join(format!("csp_install_{}", std::process::id()));
    let (bin, work) = (tmp.join("bin"), tmp.join("work"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let csp = bin.join("csp");
    std::fs::copy(env!("CARGO_BIN_EXE_csp"), &csp).unwrap();
    let script = "\
import \"std/path\"
import \"std/base64\"
import \"std/hex\"
import \"std/re\"
import \"std/sync\"
import \"std/time\"
print(path.join(\"a\", \"b.csp\"))
print(base64.encode(\"csp\"))
print(hex.encode(\"hi\"))
print(re.test(\"[0-9]+\", \"ab12\"))
let once = sync.once()
print(type(time.now()))
";
    std::fs::write(work.join("main.csp"), script).unwrap();
    // No std/ next to the binary or under the working directory.
    assert!(!bin.join("std").exists() && !work.join("std").exists());
    let out = Command::new(&csp).arg("main.csp").current_dir(&work).output().unwrap();
    let _ = std::fs::remove_dir_all(&tmp);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a/b.csp\nY3Nw\n6869\ntrue\ntime\n");
}
