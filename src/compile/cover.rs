//! Counting code for `--coverage` (docs/coverage.md): an `Op::Count` before
//! each statement, at each function's entry, on each side of an `if` and at
//! each loop's iterations and end, emitted only when the VM covers the file
//! being compiled.

use super::Compiler;
use crate::bytecode::Op;
use crate::coverage::Probe;
use crate::source::Span;

impl Compiler<'_> {
    /// The line of `span` and whether this file is covered.
    fn covered_line(&self, span: Span) -> Option<u32> {
        let c = self.vm.coverage.as_ref()?;
        c.wants(&self.file).then(|| self.file.line_col(span.start).0 as u32)
    }

    /// Counts `probe` at the line of `span` from here on.
    pub(crate) fn count(&mut self, span: Span, probe: Probe) {
        if let Some(id) = self.counter(span, probe) {
            self.emit(Op::Count { id });
        }
    }

    /// Counts the entries of the function `name` at `span`; an anonymous
    /// one is named by its place, `<fn>@LINE:COLUMN`.
    pub(crate) fn count_entry(&mut self, span: Span, name: &str) {
        if self.covered_line(span).is_none() {
            return;
        }
        let name = match name {
            "" => {
                let (line, col) = self.file.line_col(span.start);
                format!("<fn>@{line}:{col}")
            }
            _ => name.to_string(),
        };
        self.count(span, Probe::Fn(name));
    }

    fn counter(&mut self, span: Span, probe: Probe) -> Option<u32> {
        let line = self.covered_line(span)?;
        let c = self.vm.coverage.as_mut()?;
        Some(c.add(&self.file, line, probe))
    }

    /// Counts side `side` (0 or 1) of `counters` from here on, when covering.
    pub(crate) fn count_branch(&mut self, counters: Option<(u32, u32)>, side: u8) {
        if let Some((first, second)) = counters {
            self.emit(Op::Count { id: if side == 0 { first } else { second } });
        }
    }

    /// The two counters of an `if` (its body, the other way) or a loop (an
    /// iteration, the loop's end) at `span`, when covering.
    pub(crate) fn branch_counters(&mut self, span: Span) -> Option<(u32, u32)> {
        let line = self.covered_line(span)?;
        let block = self.vm.coverage.as_mut()?.next_block(&self.file, line);
        let then = self.counter(span, Probe::Branch { block, branch: 0 })?;
        let els = self.counter(span, Probe::Branch { block, branch: 1 })?;
        Some((then, els))
    }
}
