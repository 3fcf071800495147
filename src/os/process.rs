//! Child processes: started with pipes as streams, waited for through a pidfd
//! in the reactor (so a wait blocks only its fiber), killed by signal name.

use super::stream::{Kind, Step, Stream};
use crate::vm::builtin::{Blocking, Ready};
use crate::vm::{Heap, Obj, Value};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::rc::Rc;

pub struct Process {
    pub pid: u32,
    /// The command, for messages.
    pub name: Rc<str>,
    /// None once handed to a reaper thread (killed on cancellation).
    child: Option<Child>,
    /// Readable when the child exits (None where pidfds are missing).
    pidfd: Option<super::watched::Watched<OwnedFd>>,
    pub status: Option<ExitStatus>,
    /// Its pipe streams (nil when not piped).
    pub stdin: Value,
    pub stdout: Value,
    pub stderr: Value,
    /// It leads a process group of its own (its pid is the group's id), so a
    /// kill reaches what it started too; false for a child left in csp's
    /// group because it reads the terminal.
    group: bool,
}

/// Signals `kill` accepts, by name.
pub const SIGNALS: &[(&str, i32)] = &[
    ("SIGTERM", libc::SIGTERM),
    ("SIGKILL", libc::SIGKILL),
    ("SIGINT", libc::SIGINT),
    ("SIGHUP", libc::SIGHUP),
    ("SIGQUIT", libc::SIGQUIT),
    ("SIGUSR1", libc::SIGUSR1),
    ("SIGUSR2", libc::SIGUSR2),
    ("SIGSTOP", libc::SIGSTOP),
    ("SIGCONT", libc::SIGCONT),
    ("SIGPIPE", libc::SIGPIPE),
    ("SIGALRM", libc::SIGALRM),
    ("SIGABRT", libc::SIGABRT),
    ("SIGSEGV", libc::SIGSEGV),
    ("SIGBUS", libc::SIGBUS),
    ("SIGFPE", libc::SIGFPE),
    ("SIGILL", libc::SIGILL),
    ("SIGTRAP", libc::SIGTRAP),
    ("SIGWINCH", libc::SIGWINCH),
];

pub fn signal_name(sig: i32) -> String {
    SIGNALS.iter().find(|s| s.1 == sig).map_or_else(|| format!("SIG{sig}"), |s| s.0.to_string())
}

/// A pipe end of a child as a non-blocking stream object.
pub fn pipe_stream(heap: &mut Heap, fd: OwnedFd, name: String, write: bool) -> Value {
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe {
        let flags = libc::fcntl(raw, libc::F_GETFL);
        libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    let stream = Stream::new(&name, Kind::Pipe, std::fs::File::from(fd), !write, write);
    heap.host_object(stream)
}

impl Process {
    pub fn new(mut child: Child, name: &str, group: bool, heap: &mut Heap) -> Process {
        let pid = child.id();
        let stdin =
            child.stdin.take().map_or(Value::Nil, |p| pipe_stream(heap, p.into(), format!("stdin of {name}"), true));
        let stdout =
            child.stdout.take().map_or(Value::Nil, |p| pipe_stream(heap, p.into(), format!("stdout of {name}"), false));
        let stderr =
            child.stderr.take().map_or(Value::Nil, |p| pipe_stream(heap, p.into(), format!("stderr of {name}"), false));
        Process {
            pid,
            name: Rc::from(name),
            child: Some(child),
            pidfd: pidfd_open(pid).map(super::watched::Watched::new),
            status: None,
            stdin,
            stdout,
            stderr,
            group,
        }
    }

    /// Still running (not waited for, not killed by cancellation).
    pub fn running(&mut self) -> bool {
        self.status.is_none() && self.child.is_some()
    }

    /// Its exit status, or a wait for it.
    pub fn wait(&mut self) -> Result<Step<ExitStatus>, String> {
        if let Some(st) = self.status {
            return Ok(Step::Done(st));
        }
        let Some(child) = self.child.as_mut() else { return Err(format!("{} was killed and reaped", self.name)) };
        match child.try_wait() {
            Ok(Some(st)) => {
                self.status = Some(st);
                self.pidfd = None;
                Ok(Step::Done(st))
            }
            Ok(None) => Ok(Step::Block(match &self.pidfd {
                Some(fd) => Blocking::Ready(fd.as_raw_fd(), Ready::Read),
                None => wait_on_pool(self.pid),
            })),
            Err(e) => Err(format!("cannot wait for {}: {}", self.name, crate::os::io_reason(&e))),
        }
    }

    /// Sends `sig` to it, and to its group when it leads one, unless it has
    /// been reaped: while it is not, neither its pid nor its group's id can
    /// name another process.
    pub fn kill(&mut self, sig: i32) -> Result<(), String> {
        if self.status.is_some() || self.child.is_none() {
            return Ok(());
        }
        let target = if self.group { -(self.pid as i32) } else { self.pid as i32 };
        // SAFETY: kill(2) on our own unreaped child, or the group it leads.
        if unsafe { libc::kill(target, sig) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(format!("cannot signal {}: {}", self.name, crate::os::io_reason(&e)));
        }
        Ok(())
    }

    /// Kills it and its group now (its owner was cancelled, or the program
    /// ends) and reaps it, so no zombie is left. With `now` the reaping is
    /// done before returning (the program is ending: a SIGKILLed child dies
    /// at once); otherwise on a thread of its own, returned so that the
    /// program's end can wait for it, and nothing else waits.
    pub fn kill_and_reap(&mut self, now: bool) -> Option<std::thread::JoinHandle<()>> {
        if !self.running() {
            return None;
        }
        let _ = self.kill(libc::SIGKILL);
        self.pidfd = None;
        let mut child = self.child.take()?;
        if now {
            let _ = child.wait();
            return None;
        }
        Some(std::thread::spawn(move || {
            let _ = child.wait();
        }))
    }
}

/// A child process between isolates (`Send`); its pipe streams move beside
/// it, as values of the packet.
pub struct MovingProcess {
    pid: u32,
    name: String,
    child: Option<Child>,
    pidfd: Option<super::watched::Watched<OwnedFd>>,
    status: Option<ExitStatus>,
    group: bool,
}

impl Process {
    /// The descriptor a wait for it parks on.
    pub fn pidfd(&self) -> Option<std::os::fd::RawFd> {
        self.pidfd.as_ref().map(|fd| fd.as_raw_fd())
    }

    /// Takes the child to move to another isolate; this one is left as if reaped.
    pub fn to_move(&mut self) -> MovingProcess {
        MovingProcess {
            pid: self.pid,
            name: self.name.to_string(),
            child: self.child.take(),
            pidfd: self.pidfd.take(),
            status: self.status,
            group: self.group,
        }
    }
}

/// A child lost on its way (a packet dropped unreceived: a shared channel
/// collected, a job whose function could not start) is killed with its
/// group, as when its owner ends.
impl Drop for MovingProcess {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        if self.status.is_none() {
            let target = if self.group { -(self.pid as i32) } else { self.pid as i32 };
            // SAFETY: kill(2) on our own unreaped child, or the group it leads.
            unsafe { libc::kill(target, libc::SIGKILL) };
            std::thread::spawn(move || {
                let _ = child.wait();
            });
        }
    }
}

impl MovingProcess {
    /// The process again, in the isolate it moved to, with its pipes (moved there).
    pub fn land(mut self, stdin: Value, stdout: Value, stderr: Value) -> Process {
        // Taking the child leaves nothing for `drop` to kill.
        Process {
            pid: self.pid,
            name: Rc::from(std::mem::take(&mut self.name)),
            child: self.child.take(),
            pidfd: self.pidfd.take(),
            status: self.status,
            stdin,
            stdout,
            stderr,
            group: self.group,
        }
    }
}

/// `{code, signal, ok}` of an exit status.
pub fn status_map(heap: &mut Heap, st: ExitStatus) -> Value {
    let code = st.code().map_or(Value::Nil, |c| Value::Int(c as i64));
    let signal = match st.signal() {
        Some(s) => heap.string(signal_name(s)),
        None => Value::Nil,
    };
    let mut m = crate::vm::value::Map::default();
    m.insert(crate::vm::Key::Str("code".into()), code);
    m.insert(crate::vm::Key::Str("signal".into()), signal);
    m.insert(crate::vm::Key::Str("ok".into()), Value::Bool(st.success()));
    Value::Obj(heap.alloc(Obj::Map(m)))
}

#[cfg(target_os = "linux")]
fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: the syscall returns a new descriptor we then own, or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// No pidfds elsewhere than Linux: children are waited for on the pool.
#[cfg(not(target_os = "linux"))]
fn pidfd_open(_: u32) -> Option<OwnedFd> {
    None
}

/// Without pidfds: a pool job that blocks until the child exits, without
/// reaping it (`try_wait` reaps it when the builtin runs again).
fn wait_on_pool(pid: u32) -> Blocking {
    Blocking::IoThenRetry(Box::new(move || {
        // SAFETY: waitid with WNOWAIT only observes our child's state.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT);
        }
        Box::new(|_: &mut Heap| Ok(Value::Nil))
    }))
}
