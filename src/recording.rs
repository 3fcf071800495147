//! The files `csp run` and `csp test` write about a program as it runs:
//! `--trace` (docs/trace.md) and `--profile` (docs/profiling.md). Both are
//! created before the program runs (a path that cannot be written is a bad
//! command line), recorded into by every VM the command makes, and finished
//! when it ends (a write that fails then is reported; the exit code stands).

use crate::sched::{ProfileFile, TraceFile};
use crate::vm::Vm;

/// The profile's default rate, Go's: samples a second of CPU time.
pub const DEFAULT_HZ: u32 = 100;

/// What a command records, with the paths it was given.
#[derive(Default)]
pub struct Recording {
    trace: Option<(String, TraceFile)>,
    profile: Option<(String, ProfileFile)>,
}

impl Recording {
    /// Creates the files asked for; the message for the first that cannot be.
    pub fn open(trace: Option<&str>, profile: Option<&str>, hz: u32) -> Result<Recording, String> {
        let fail = |what: &str, path: &str, e: std::io::Error| {
            format!("csp: cannot write {what} {path}: {}", crate::os::io_reason(&e))
        };
        let mut r = Recording::default();
        if let Some(path) = trace {
            r.trace = Some((path.to_string(), TraceFile::create(path).map_err(|e| fail("trace", path, e))?));
        }
        if let Some(path) = profile {
            r.profile = Some((path.to_string(), ProfileFile::create(path, hz).map_err(|e| fail("profile", path, e))?));
        }
        Ok(r)
    }

    /// Makes `vm` record into the files; `name` is its process in the trace.
    pub fn attach(&self, vm: &mut Vm, name: Option<&str>) {
        if let Some((_, t)) = &self.trace {
            t.attach(vm);
            if let Some(name) = name {
                vm.sched.name_trace_process(name);
            }
        }
        if let Some((_, p)) = &self.profile {
            p.attach(vm);
        }
    }

    /// Ends the files, reporting a write that failed on stderr.
    pub fn finish(self) {
        if let Some((path, t)) = self.trace {
            if let Err(e) = t.finish() {
                crate::err_println!("csp: cannot write trace {path}: {}", crate::os::io_reason(&e));
            }
        }
        if let Some((path, p)) = self.profile {
            if let Err(e) = p.finish() {
                crate::err_println!("csp: cannot write profile {path}: {}", crate::os::io_reason(&e));
            }
        }
    }
}
