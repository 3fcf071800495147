//! `--coverage` (docs/coverage.md): the counters a covered VM's `Op::Count`
//! bumps, what each counts (a line, a function's entry, a side of an `if`),
//! and the report they add up to, merged across VMs and processes and written
//! as lcov (`lcov.rs`).

mod lcov;

use crate::source::SourceFile;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// What a counter counts.
#[derive(Clone, Debug)]
pub enum Probe {
    /// A statement starting on the line ran.
    Line,
    /// The function (by name; an anonymous one's is `<fn>@LINE:COLUMN`) was entered.
    Fn(String),
    /// Side `branch` of the `block`th `if` or loop on the line was taken: an
    /// `if`'s body (0) or the other way (1), a loop's iteration (0) or its end (1).
    Branch { block: u32, branch: u32 },
}

/// One VM's counters; compiling a covered file adds to them.
pub struct Counters {
    /// Cover `std/` modules too (`--coverage-std`).
    pub include_std: bool,
    sites: Vec<(Rc<SourceFile>, u32, Probe)>,
    counts: Vec<u64>,
    /// The next `if` block number of each (file, line).
    blocks: HashMap<(String, u32), u32>,
}

impl Counters {
    pub fn new(include_std: bool) -> Counters {
        Counters { include_std, sites: Vec::new(), counts: Vec::new(), blocks: HashMap::new() }
    }

    /// Whether code compiled from `file` counts: not the prelude or a generated
    /// driver (named `<...>`), not std unless asked.
    pub fn wants(&self, file: &SourceFile) -> bool {
        !file.name.contains('<') && (!file.std || self.include_std)
    }

    /// A new counter for `probe` at `line` of `file`; its id for `Op::Count`.
    pub fn add(&mut self, file: &Rc<SourceFile>, line: u32, probe: Probe) -> u32 {
        self.sites.push((file.clone(), line, probe));
        self.counts.push(0);
        (self.counts.len() - 1) as u32
    }

    /// The block number for a new `if` at `line` of `file`.
    pub fn next_block(&mut self, file: &SourceFile, line: u32) -> u32 {
        let n = self.blocks.entry((file.name.clone(), line)).or_insert(0);
        *n += 1;
        *n - 1
    }

    #[inline]
    pub fn hit(&mut self, id: u32) {
        if let Some(c) = self.counts.get_mut(id as usize) {
            *c += 1;
        }
    }
}

/// A file's counts as lcov reports them.
#[derive(Default, Debug, PartialEq)]
pub struct FileCounts {
    /// Line → executions (the most of any counter on the line).
    pub lines: BTreeMap<u32, u64>,
    /// Function name → (its line, calls).
    pub fns: BTreeMap<String, (u32, u64)>,
    /// (line, block, branch) → times taken; None when the `if` never ran.
    pub branches: BTreeMap<(u32, u32, u32), Option<u64>>,
}

/// Counts of every covered file by absolute path, summed over the runs added.
#[derive(Default, Debug, PartialEq)]
pub struct Report {
    pub files: BTreeMap<String, FileCounts>,
}

impl Report {
    /// Adds one VM's counters.
    pub fn add(&mut self, c: &Counters) {
        let mut per_file: BTreeMap<String, FileCounts> = BTreeMap::new();
        // Functions of the same name in one file are told apart by their line.
        let mut fn_lines: HashMap<(String, String), Vec<u32>> = HashMap::new();
        for (file, line, probe) in &c.sites {
            if let Probe::Fn(name) = probe {
                fn_lines.entry((file.name.clone(), name.clone())).or_default().push(*line);
            }
        }
        let mut paths: HashMap<String, String> = HashMap::new();
        for ((file, line, probe), &n) in c.sites.iter().zip(&c.counts) {
            let path = paths.entry(file.name.clone()).or_insert_with(|| absolute(file)).clone();
            let f = per_file.entry(path).or_default();
            match probe {
                Probe::Line => max_into(&mut f.lines, *line, n),
                Probe::Fn(name) => {
                    max_into(&mut f.lines, *line, n);
                    let shared = fn_lines.get(&(file.name.clone(), name.clone())).is_some_and(|l| l.len() > 1);
                    let label = if shared { format!("{name}@{line}") } else { name.clone() };
                    let e = f.fns.entry(label).or_insert((*line, 0));
                    e.1 += n;
                }
                Probe::Branch { block, branch } => {
                    *f.branches.entry((*line, *block, *branch)).or_insert(Some(0)) = Some(n);
                }
            }
        }
        for (path, mut f) in per_file {
            // An `if` that never ran has no sides taken or not: lcov's `-`.
            for ((line, _, _), taken) in f.branches.iter_mut() {
                if f.lines.get(line).copied().unwrap_or(0) == 0 {
                    *taken = None;
                }
            }
            self.merge_file(path, f);
        }
    }

    /// Adds another run's counts of the file at `path`.
    pub fn merge_file(&mut self, path: String, f: FileCounts) {
        let into = self.files.entry(path).or_default();
        for (line, n) in f.lines {
            *into.lines.entry(line).or_insert(0) += n;
        }
        for (name, (line, n)) in f.fns {
            into.fns.entry(name).or_insert((line, 0)).1 += n;
        }
        for (k, taken) in f.branches {
            let e = into.branches.entry(k).or_insert(None);
            *e = match (*e, taken) {
                (None, t) | (t, None) => t,
                (Some(a), Some(b)) => Some(a + b),
            };
        }
    }

    /// The report as an lcov tracefile.
    pub fn to_lcov(&self) -> String {
        lcov::write(self)
    }

    /// Adds the counts of an lcov tracefile (another process's report).
    pub fn merge_lcov(&mut self, text: &str) {
        lcov::read(self, text)
    }
}

fn max_into(m: &mut BTreeMap<u32, u64>, line: u32, n: u64) {
    let e = m.entry(line).or_insert(0);
    *e = (*e).max(n);
}

/// The absolute path lcov names a file by: std modules at their place in
/// the csp source tree the binary was built from.
fn absolute(file: &SourceFile) -> String {
    if file.std {
        return format!("{}/{}", env!("CARGO_MANIFEST_DIR"), file.name);
    }
    let p = std::path::Path::new(&file.name);
    match std::fs::canonicalize(p) {
        Ok(abs) => abs.to_string_lossy().into_owned(),
        Err(_) => std::env::current_dir().map(|d| d.join(p).to_string_lossy().into_owned()).unwrap_or_default(),
    }
}

/// Writes one VM's counts to `path` as lcov.
pub fn write(c: &Counters, path: &str) -> std::io::Result<()> {
    let mut r = Report::default();
    r.add(c);
    std::fs::write(path, r.to_lcov())
}
