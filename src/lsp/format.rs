//! `textDocument/formatting` through `csp fmt`: one edit that replaces the
//! document with its canonical layout. A file that does not parse is left
//! as it is (its syntax errors are already shown as diagnostics).

use super::text::{Encoding, Lines};
use lsp_types::{Range, TextEdit};

pub fn format(text: &str, enc: Encoding) -> Vec<TextEdit> {
    match crate::fmt::format_source(text) {
        Ok(out) if out != text => {
            let end = Lines::new(text, enc).position(text.len());
            vec![TextEdit { range: Range { start: Default::default(), end }, new_text: out }]
        }
        _ => Vec::new(),
    }
}
