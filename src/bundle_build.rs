//! `csp build ENTRY -o OUT` (docs/build.md): compiles the entry, recording
//! every module file it loads, and writes a copy of this executable with the
//! payload appended (`bundle.rs`).

use crate::bundle::{encode, Bundle};

/// `csp build ENTRY -o OUT`: compiles the entry (loading every module it
/// reaches) and writes the executable. Err: the exit code and report.
pub fn build(entry: &str, out: &str, offline: bool, color: bool) -> Result<(), (i32, String)> {
    let src = std::fs::read_to_string(entry)
        .map_err(|e| (64, format!("csp: cannot read {entry}: {}\n", crate::os::io_reason(&e))))?;
    let options =
        crate::embed::Options { caps: crate::embed::Caps::all(), stdout: true, offline, ..Default::default() };
    let mut vm = crate::embed::Runtime::new(options).into_vm();
    vm.loader.record = Some(Vec::new());
    let file = std::rc::Rc::new(crate::source::SourceFile::new(entry, src.clone()));
    if let Err(diags) = crate::runner::compile(&mut vm, &file) {
        return Err((2, crate::diag::render_all(&diags, &file, color)));
    }
    let mut b = Bundle { entry: entry.to_string(), ..Bundle::default() };
    b.files.extend(vm.loader.record.take().unwrap_or_default());
    b.files.insert(entry.to_string(), src);
    if let Some(Ok(pkgs)) = &vm.loader.packages {
        b.packages.extend(pkgs.iter().map(|(k, v)| (k.clone(), v.to_string_lossy().into_owned())));
    }
    let exe = std::env::current_exe().map_err(|e| (1, format!("csp: cannot find the csp executable: {e}\n")))?;
    let tmp = format!("{out}.tmp{}", std::process::id());
    // A copy of this executable (copy_file_range: no pass through memory),
    // then the payload.
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;
        std::fs::copy(&exe, &tmp)?;
        let mut f = std::fs::OpenOptions::new().append(true).open(&tmp)?;
        f.write_all(&encode(&b))?;
        f.sync_all()?;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
        std::fs::rename(&tmp, out)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        (1, format!("csp: cannot write {out}: {}\n", crate::os::io_reason(&e)))
    })
}
