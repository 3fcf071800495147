//! Child processes: `proc.spawn(cmd, opts)` (std/proc.csp builds `run` and
//! `output` on it), and a process's `wait`, `kill` and fields.

use super::args::arity;
use crate::os::process::{status_map, Process, SIGNALS};
use crate::vm::host::{Class, HostObject, Moving, Released};
use crate::vm::{err, ErrorKind, Fiber, Handle, Key, NativeFn, Obj, Res, Ret, Value, Vm};
use std::process::{Command, Stdio};

pub const FIELDS: &[&str] = &["pid", "stdin", "stdout", "stderr"];

pub static CLASS: Class = Class {
    name: "process",
    methods: &[("kill", kill), ("wait", wait)],
    next: None,
    field: Some(|vm, h, name| field(process(vm, h), name)),
};

impl HostObject for Process {
    fn class(&self) -> &'static Class {
        &CLASS
    }
    /// A descriptor is scarcer than memory: abandoned processes should
    /// bring the collection closer.
    fn size(&self) -> usize {
        64 * 1024
    }
    fn trace(&self, out: &mut dyn FnMut(Value)) {
        [self.stdin, self.stdout, self.stderr].into_iter().for_each(out);
    }
    fn display(&self, out: &mut String) {
        out.push_str(&format!("<process {}>", self.pid));
    }
    fn adopted(&self) -> bool {
        self.status.is_none()
    }
    fn fd(&self) -> Option<std::os::fd::RawFd> {
        self.pidfd()
    }
    fn movable(&self) -> Option<Result<(), String>> {
        Some(Ok(()))
    }
    fn take_to_move(&mut self) -> Box<dyn Moving> {
        Box::new(self.to_move())
    }
    /// Its owner ended: it is killed with its group, and its pipes close.
    fn release(&mut self, ending: bool) -> Released {
        if !self.running() {
            return Released::default();
        }
        Released {
            reapers: self.kill_and_reap(ending).into_iter().collect(),
            close: vec![self.stdin, self.stdout, self.stderr],
        }
    }
}

impl Moving for crate::os::process::MovingProcess {
    /// `held`: its pipes, in `trace`'s order.
    fn land(self: Box<Self>, held: &[Value]) -> Box<dyn HostObject> {
        let pipe = |i: usize| held.get(i).copied().unwrap_or(Value::Nil);
        Box::new((*self).land(pipe(0), pipe(1), pipe(2)))
    }
}

pub fn register(vm: &mut Vm) {
    vm.define_hidden("proc.spawn", NativeFn::Full(spawn));
}

fn process(vm: &mut Vm, h: Handle) -> &mut Process {
    vm.heap.host_mut::<Process>(h).expect("a process")
}

/// `p.pid`, `p.stdin`, `p.stdout`, `p.stderr`.
fn field(p: &Process, name: &str) -> Option<Value> {
    match name {
        "pid" => Some(Value::Int(p.pid as i64)),
        "stdin" => Some(p.stdin),
        "stdout" => Some(p.stdout),
        "stderr" => Some(p.stderr),
        _ => None,
    }
}

fn wait(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 0)?;
    let r = process(vm, h).wait();
    super::args::step(vm, r, |vm, st| Ok(status_map(&mut vm.heap, st)))
}

fn kill(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 1)?;
    let sig = match args.first() {
        None => libc::SIGTERM,
        Some(v) => signal_arg(vm, *v)?,
    };
    match process(vm, h).kill(sig) {
        Ok(()) => Ok(Ret::Value(Value::Nil)),
        Err(msg) => err(ErrorKind::Io, msg),
    }
}

fn signal_arg(vm: &Vm, v: Value) -> Res<i32> {
    let name = vm.heap.as_str(v).map(|s| s.s.to_string());
    match name.as_deref().and_then(|n| SIGNALS.iter().find(|s| s.0 == n)) {
        Some(s) => Ok(s.1),
        None => {
            let names: Vec<&str> = SIGNALS.iter().map(|s| s.0).collect();
            err(
                ErrorKind::Value,
                format!("kill() needs a signal name ({}), not {}", names.join(", "), crate::display::repr(&vm.heap, v)),
            )
        }
    }
}

/// The string value of map `opts` at `key` (None if missing or nil).
fn opt_str(vm: &Vm, opts: Option<&crate::vm::value::Map>, key: &str) -> Res<Option<String>> {
    let Some(v) = opts.and_then(|m| m.get(&Key::Str(key.into()))).copied() else { return Ok(None) };
    if let Value::Nil = v {
        return Ok(None);
    }
    match vm.heap.as_str(v) {
        Some(s) => Ok(Some(s.s.to_string())),
        None => err(ErrorKind::Type, format!("spawn() option {key} needs a string, not {}", vm.heap.type_name(v))),
    }
}

/// `"pipe"`, `"inherit"` or `"null"`.
fn stdio(vm: &Vm, opts: Option<&crate::vm::value::Map>, key: &str, default: &str) -> Res<Stdio> {
    let mode = opt_str(vm, opts, key)?.unwrap_or_else(|| default.to_string());
    match mode.as_str() {
        "pipe" => Ok(Stdio::piped()),
        "inherit" => Ok(Stdio::inherit()),
        "null" => Ok(Stdio::null()),
        other => {
            err(ErrorKind::Value, format!("spawn() option {key} is \"pipe\", \"inherit\" or \"null\", not {other:?}"))
        }
    }
}

/// `spawn(cmd, opts = {})`: `cmd` a list of strings (the program and its
/// arguments), or with `shell: true` a command line for `/bin/sh -c`.
fn spawn(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("spawn", args, 1, 2)?;
    let opts = match args.get(1) {
        None | Some(Value::Nil) => None,
        Some(Value::Obj(h)) if matches!(vm.heap.get(*h), Obj::Map(_)) => match vm.heap.get(*h) {
            Obj::Map(m) => Some(m.clone()),
            _ => None,
        },
        Some(v) => return err(ErrorKind::Type, format!("spawn() options need a map, not {}", vm.heap.type_name(*v))),
    };
    let opts = opts.as_ref();
    let shell = matches!(opts.and_then(|m| m.get(&Key::Str("shell".into()))), Some(Value::Bool(true)));
    let argv = command_words(vm, args[0], shell)?;
    let shown = argv.join(" ");
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    if let Some(dir) = opt_str(vm, opts, "cwd")? {
        cmd.current_dir(dir);
    }
    if matches!(opts.and_then(|m| m.get(&Key::Str("clear_env".into()))), Some(Value::Bool(true))) {
        cmd.env_clear();
    }
    if let Some(env) = opts.and_then(|m| m.get(&Key::Str("env".into()))).copied() {
        for (k, v) in env_pairs(vm, env)? {
            cmd.env(k, v);
        }
    }
    // A process group of its own, so that a kill reaches what it starts too;
    // but a child reading the terminal stays in csp's group, the terminal's
    // foreground one, or its reads would stop it (SIGTTIN).
    let stdin_mode = opt_str(vm, opts, "stdin")?;
    // SAFETY: isatty on descriptor 0 only asks.
    let reads_terminal = matches!(stdin_mode.as_deref(), None | Some("inherit")) && unsafe { libc::isatty(0) } == 1;
    let group = !reads_terminal;
    if group {
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    }
    cmd.stdin(stdio(vm, opts, "stdin", "inherit")?);
    cmd.stdout(stdio(vm, opts, "stdout", "pipe")?);
    cmd.stderr(stdio(vm, opts, "stderr", "inherit")?);
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return err(ErrorKind::Io, format!("command not found: {}", argv[0]));
        }
        Err(e) => return err(ErrorKind::Io, format!("cannot run {}: {}", argv[0], crate::os::io_reason(&e))),
    };
    let p = Process::new(child, &shown, group, &mut vm.heap);
    let Value::Obj(h) = vm.heap.host_object(p) else { unreachable!("an object") };
    crate::sched::ops::adopt(vm, h);
    Ok(Ret::Value(Value::Obj(h)))
}

fn command_words(vm: &Vm, cmd: Value, shell: bool) -> Res<Vec<String>> {
    if shell {
        return match vm.heap.as_str(cmd) {
            Some(s) => Ok(vec!["/bin/sh".into(), "-c".into(), s.s.to_string()]),
            None => err(ErrorKind::Type, "spawn() with shell: true needs the command line as a string"),
        };
    }
    let words: Option<Vec<String>> = match cmd {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::List(items) => items.iter().map(|&w| vm.heap.as_str(w).map(|s| s.s.to_string())).collect(),
            Obj::Str(_) => {
                return err(
                    ErrorKind::Type,
                    "spawn() needs a list of words, like [\"ls\", \"-l\"] (or shell: true for a command line)",
                )
            }
            _ => None,
        },
        _ => None,
    };
    match words {
        Some(w) if !w.is_empty() => Ok(w),
        Some(_) => err(ErrorKind::Value, "spawn() needs a command: the list is empty"),
        None => err(
            ErrorKind::Type,
            format!("spawn() needs a list of strings, not {}", crate::display::repr(&vm.heap, cmd)),
        ),
    }
}

fn env_pairs(vm: &Vm, env: Value) -> Res<Vec<(String, String)>> {
    let Value::Obj(h) = env else { return err(ErrorKind::Type, "spawn() option env needs a map of strings") };
    let Obj::Map(m) = vm.heap.get(h) else { return err(ErrorKind::Type, "spawn() option env needs a map of strings") };
    m.iter()
        .map(|(k, v)| match (k, vm.heap.as_str(*v)) {
            (Key::Str(k), Some(v)) => Ok((k.to_string(), v.s.to_string())),
            _ => err(ErrorKind::Type, "spawn() option env needs a map of strings"),
        })
        .collect()
}
