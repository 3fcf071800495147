//! Lays out the items of a file (tokens and comments) line by line: the
//! author's line breaks are kept (runs of blank lines become one), and the
//! printer decides indentation and the spaces between items. See `docs/fmt.md`.

use super::comments::{Item, Kind};
use crate::syntax::token::Raw;
use std::collections::HashSet;

const INDENT: &str = "    ";

/// A line of output: indentation, code, and a trailing `//` comment.
struct Line {
    indent: usize,
    code: String,
    comment: Option<String>,
}

/// An open bracket.
struct Frame {
    open: Raw,
    /// Indentation of the line it was opened on.
    indent: usize,
    /// Index of that line.
    line: usize,
    /// A map literal's `{` (not a block's).
    map: bool,
    /// `?` seen at this level whose `:` has not come yet.
    ternaries: usize,
}

struct Printer<'a> {
    items: &'a [Item<'a>],
    maps: &'a HashSet<usize>,
    /// `None` is a blank line.
    lines: Vec<Option<Line>>,
    stack: Vec<Frame>,
    root_ternaries: usize,
    /// The last token printed (comments excluded) and its line.
    prev: Option<(Kind, usize)>,
    /// The last item on the current line, and whether it was a prefix operator.
    last_on_line: Option<(Kind, bool)>,
    /// The next item starts a line (a `;` between statements was dropped).
    force_break: bool,
    /// The indentation a bracket opened here belongs to: the line's, or that
    /// of an earlier line whose bracket this line has closed (so the block
    /// after a multi-line `for x in [...] {` is indented from the `for`).
    level: usize,
}

/// Prints `items` (of a file that parses); `maps` holds the offsets of the
/// `{` of map literals; `header` (a `#!` line) is kept as the first line.
pub fn print(header: &str, items: &[Item], maps: &HashSet<usize>) -> String {
    let mut p = Printer {
        items,
        maps,
        lines: Vec::new(),
        stack: Vec::new(),
        root_ternaries: 0,
        prev: None,
        last_on_line: None,
        force_break: false,
        level: 0,
    };
    if !header.is_empty() {
        p.lines.push(Some(Line { indent: 0, code: header.to_string(), comment: None }));
    }
    for i in 0..items.len() {
        p.item(i);
    }
    align_comments(&mut p.lines);
    let mut out = String::new();
    for line in &p.lines {
        if let Some(l) = line {
            if !l.code.is_empty() {
                out.push_str(&INDENT.repeat(l.indent));
                out.push_str(&l.code);
            }
            if let Some(c) = &l.comment {
                out.push_str(c);
            }
        }
        out.push('\n');
    }
    out
}

fn is_opener(k: Kind) -> bool {
    matches!(k, Kind::P(Raw::LParen | Raw::LBracket | Raw::LBrace))
}

fn is_closer(k: Kind) -> bool {
    matches!(k, Kind::P(Raw::RParen | Raw::RBracket | Raw::RBrace))
}

/// The end of an operand: a following `(` or `[` is a call or an index, a
/// following `-` or `<-` is binary.
fn ends_operand(k: Kind) -> bool {
    matches!(
        k,
        Kind::Ident
            | Kind::Num
            | Kind::Str
            | Kind::P(Raw::RParen | Raw::RBracket | Raw::RBrace | Raw::True | Raw::False | Raw::Nil | Raw::Chan)
    )
}

/// `Tok::ends_statement`: a newline after it is a `;` (outside `(` and `[`).
fn ends_statement(k: Kind) -> bool {
    ends_operand(k) && k != Kind::P(Raw::Chan)
        || matches!(k, Kind::P(Raw::Break | Raw::Continue | Raw::Return | Raw::Yield))
}

impl Printer<'_> {
    fn cur_line(&self) -> usize {
        self.lines.len() - 1
    }

    /// Whether a newline here would be read as `;` after the last token.
    fn newline_ends_statement(&self) -> bool {
        let in_block = self.stack.last().is_none_or(|f| f.open == Raw::LBrace);
        in_block && self.prev.is_some_and(|(k, _)| ends_statement(k))
    }

    fn next_token(&self, i: usize) -> Option<&Item<'_>> {
        self.items[i + 1..].iter().find(|x| !x.is_comment())
    }

    fn item(&mut self, i: usize) {
        let it = &self.items[i];
        if it.kind == Kind::P(Raw::Semi) && self.semi_dropped(i) {
            return;
        }
        let starts_line = self.lines.is_empty() || it.breaks > 0 || self.force_break;
        // After a statement-ending newline, `-` and `<-` start an operand.
        let after_statement = starts_line && self.newline_ends_statement();
        if starts_line {
            self.start_line(i);
        } else if it.kind == Kind::LineComment {
            let line = self.lines.last_mut().and_then(Option::as_mut).expect("a line is open");
            line.comment = Some(it.text.to_string());
            return;
        } else if let Some((last, prefix)) = self.last_on_line {
            if self.space(last, prefix, it.kind) {
                self.push_text(" ");
            }
        }
        self.push_text(it.text);
        let mut prefix = false;
        match it.kind {
            Kind::P(open @ (Raw::LParen | Raw::LBracket | Raw::LBrace)) => {
                let map = open == Raw::LBrace && self.maps.contains(&it.start);
                self.stack.push(Frame { open, indent: self.level, line: self.cur_line(), map, ternaries: 0 });
            }
            Kind::P(Raw::RParen | Raw::RBracket | Raw::RBrace) => {
                if let Some(f) = self.stack.pop() {
                    self.level = f.indent;
                }
            }
            Kind::P(Raw::Question) => *self.ternaries() += 1,
            Kind::P(Raw::Colon) if *self.ternaries() > 0 => *self.ternaries() -= 1,
            Kind::P(Raw::Minus | Raw::Arrow) => {
                prefix = after_statement || !self.prev.is_some_and(|(k, _)| ends_operand(k))
            }
            Kind::P(Raw::Bang | Raw::Tilde | Raw::Ellipsis) => prefix = true,
            _ => {}
        }
        self.last_on_line = Some((it.kind, prefix));
        if !it.is_comment() {
            self.prev = Some((it.kind, self.cur_line()));
        }
    }

    /// Drops an explicit `;` the layout makes redundant: at the end of a line
    /// or before `}`, or between statements on a line that is not a one-line
    /// block (the next statement then starts a line of its own).
    fn semi_dropped(&mut self, i: usize) -> bool {
        let next = self.items.get(i + 1);
        if next.is_some_and(|n| n.kind == Kind::P(Raw::RBrace) && n.breaks == 0) {
            return true;
        }
        if !self.newline_ends_statement() || self.next_token(i).is_some_and(|n| n.kind == Kind::P(Raw::Dot)) {
            return false;
        }
        let line_ends = next.is_none_or(|n| n.breaks > 0 || n.kind == Kind::LineComment);
        if line_ends {
            return true;
        }
        let one_line_block = self.stack.last().is_some_and(|f| f.line == self.cur_line());
        if !one_line_block {
            self.force_break = true;
        }
        !one_line_block
    }

    fn start_line(&mut self, i: usize) {
        let it = &self.items[i];
        let after_opener = self.last_on_line.is_some_and(|(k, _)| is_opener(k));
        if it.breaks >= 2 && !self.lines.is_empty() && !after_opener && !is_closer(it.kind) {
            self.lines.push(None);
        }
        let indent = self.indent(i);
        self.lines.push(Some(Line { indent, code: String::new(), comment: None }));
        self.level = indent;
        self.last_on_line = None;
        self.force_break = false;
    }

    /// The indentation of a line starting with item `i`: a closer's is its
    /// opener's line's; other lines are one deeper than the line of the
    /// innermost open bracket, and one more when they continue an expression
    /// (after an operator, or starting with `.`).
    fn indent(&self, i: usize) -> usize {
        let it = &self.items[i];
        if is_closer(it.kind) {
            return self.stack.last().map_or(0, |f| f.indent);
        }
        let inner = self.stack.last().map_or(0, |f| f.indent + 1);
        let next = if it.is_comment() { self.next_token(i) } else { Some(it) };
        let dot = next.is_some_and(|n| n.kind == Kind::P(Raw::Dot));
        let Some((prev, prev_line)) = self.prev else { return inner };
        let opened_there = self.stack.last().is_some_and(|f| f.line == prev_line);
        let in_list = self.stack.last().is_some_and(|f| f.open != Raw::LBrace || f.map);
        let open_expr = !(ends_statement(prev)
            || is_opener(prev)
            || prev == Kind::P(Raw::Semi)
            || prev == Kind::P(Raw::Comma) && in_list);
        inner + usize::from((open_expr || dot) && !opened_there)
    }

    fn ternaries(&mut self) -> &mut usize {
        match self.stack.last_mut() {
            Some(f) => &mut f.ternaries,
            None => &mut self.root_ternaries,
        }
    }

    fn push_text(&mut self, s: &str) {
        if let Some(Some(line)) = self.lines.last_mut() {
            line.code.push_str(s);
        }
    }

    /// Whether a space separates `cur` from `last` on a line (`prefix`: `last`
    /// is a prefix operator).
    fn space(&self, last: Kind, prefix: bool, cur: Kind) -> bool {
        use Raw::*;
        let (l, c) = match (last, cur) {
            (Kind::P(l), Kind::P(c)) => (Some(l), Some(c)),
            (Kind::P(l), _) => (Some(l), None),
            (_, Kind::P(c)) => (None, Some(c)),
            _ => (None, None),
        };
        let top_is_map = self.stack.last().is_some_and(|f| f.map);
        match (l, c) {
            (_, Some(Comma | Semi)) => false,
            (Some(Comma | Semi), c) => !is_closer(cur) || c == Some(RBrace) && !top_is_map,
            (Some(LParen | LBracket), _) | (_, Some(RParen | RBracket)) => false,
            _ if last == Kind::BlockComment || cur == Kind::BlockComment => true,
            (Some(LBrace), Some(RBrace)) => false,
            (Some(LBrace), _) | (_, Some(RBrace)) => !top_is_map,
            (Some(Dot | DotDot | DotDotEq), _) | (_, Some(Dot | DotDot | DotDotEq)) => false,
            (_, Some(LParen | LBracket)) if ends_operand(last) || last == Kind::P(Fn) => false,
            (_, Some(Colon)) => self.colon_is_ternary(),
            _ => !prefix,
        }
    }

    /// Whether the `:` about to be printed closes a `? :`.
    fn colon_is_ternary(&self) -> bool {
        self.stack.last().map_or(self.root_ternaries, |f| f.ternaries) > 0
    }
}

/// Lines in a row that end with a `//` comment after code have their comments
/// in one column, a space after the longest code (gofmt's rule).
fn align_comments(lines: &mut [Option<Line>]) {
    let width = |l: &Line| match l.code.rfind('\n') {
        Some(n) => l.code[n + 1..].chars().count(),
        None => l.indent * INDENT.len() + l.code.chars().count(),
    };
    let trailing = |l: &Option<Line>| l.as_ref().is_some_and(|l| l.comment.is_some() && !l.code.is_empty());
    let mut i = 0;
    while i < lines.len() {
        if !trailing(&lines[i]) {
            i += 1;
            continue;
        }
        let run = i..(i..lines.len()).find(|&j| !trailing(&lines[j])).unwrap_or(lines.len());
        let col = lines[run.clone()].iter().flatten().map(width).max().unwrap_or(0) + 1;
        for line in lines[run.clone()].iter_mut().flatten() {
            let pad = " ".repeat(col - width(line));
            line.comment = line.comment.take().map(|c| pad + &c);
        }
        i = run.end;
    }
}
