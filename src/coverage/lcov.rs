//! lcov tracefiles (the format of `geninfo`, read by `genhtml`): one record per
//! source file of `FN`/`FNDA`, `BRDA` and `DA` lines with their totals.

use super::{FileCounts, Report};
use std::fmt::Write;

pub(super) fn write(r: &Report) -> String {
    let mut out = String::new();
    for (path, f) in &r.files {
        let _ = writeln!(out, "TN:\nSF:{path}");
        let mut fns: Vec<(&String, &(u32, u64))> = f.fns.iter().collect();
        fns.sort_by_key(|(name, (line, _))| (*line, *name));
        for (name, (line, _)) in &fns {
            let _ = writeln!(out, "FN:{line},{name}");
        }
        for (name, (_, n)) in &fns {
            let _ = writeln!(out, "FNDA:{n},{name}");
        }
        let hit = fns.iter().filter(|(_, (_, n))| *n > 0).count();
        let _ = writeln!(out, "FNF:{}\nFNH:{hit}", fns.len());
        for ((line, block, branch), taken) in &f.branches {
            let taken = taken.map_or("-".to_string(), |n| n.to_string());
            let _ = writeln!(out, "BRDA:{line},{block},{branch},{taken}");
        }
        let hit = f.branches.values().filter(|t| t.is_some_and(|n| n > 0)).count();
        let _ = writeln!(out, "BRF:{}\nBRH:{hit}", f.branches.len());
        for (line, n) in &f.lines {
            let _ = writeln!(out, "DA:{line},{n}");
        }
        let hit = f.lines.values().filter(|&&n| n > 0).count();
        let _ = writeln!(out, "LF:{}\nLH:{hit}\nend_of_record", f.lines.len());
    }
    out
}

/// Adds the records of `text` to `r`; lines it does not know are skipped
/// (the totals are recomputed when written).
pub(super) fn read(r: &mut Report, text: &str) {
    let mut current: Option<(String, FileCounts)> = None;
    for line in text.lines() {
        let Some((tag, rest)) = line.split_once(':') else {
            if line == "end_of_record" {
                if let Some((path, f)) = current.take() {
                    r.merge_file(path, f);
                }
            }
            continue;
        };
        if tag == "SF" {
            current = Some((rest.to_string(), FileCounts::default()));
            continue;
        }
        let Some((_, f)) = current.as_mut() else { continue };
        let parts: Vec<&str> = rest.splitn(4, ',').collect();
        let num = |i: usize| parts.get(i).and_then(|s| s.parse::<u64>().ok());
        match (tag, parts.len()) {
            ("DA", 2..) => {
                if let (Some(l), Some(n)) = (num(0), num(1)) {
                    *f.lines.entry(l as u32).or_insert(0) += n;
                }
            }
            ("FN", 2) => {
                if let Some(l) = num(0) {
                    f.fns.entry(parts[1].to_string()).or_insert((l as u32, 0)).0 = l as u32;
                }
            }
            ("FNDA", 2) => {
                if let Some(n) = num(0) {
                    f.fns.entry(parts[1].to_string()).or_insert((0, 0)).1 += n;
                }
            }
            ("BRDA", 4) => {
                if let (Some(l), Some(b), Some(br)) = (num(0), num(1), num(2)) {
                    f.branches.insert((l as u32, b as u32, br as u32), num(3));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FileCounts, Report};

    /// A report read back from its lcov is the same report; read twice, the
    /// counts double (how `-j`'s processes add up), and a branch never reached
    /// in one run takes the other's count.
    #[test]
    fn lcov_round_trips_and_adds_up() {
        let mut r = Report::default();
        let mut f = FileCounts::default();
        f.lines.extend([(1, 3), (2, 0)]);
        f.fns.insert("main".into(), (1, 3));
        f.branches.extend([((2, 0, 0), Some(1)), ((2, 0, 1), None)]);
        r.merge_file("/x/a.csp".into(), f);
        let text = r.to_lcov();
        assert!(text.contains("BRDA:2,0,0,1\nBRDA:2,0,1,-\nBRF:2\nBRH:1\n"), "{text}");
        let mut back = Report::default();
        back.merge_lcov(&text);
        assert_eq!(back, r);
        back.merge_lcov(&text.replace("BRDA:2,0,1,-", "BRDA:2,0,1,4"));
        let a = &back.files["/x/a.csp"];
        assert_eq!((a.lines[&1], a.fns["main"], a.branches[&(2, 0, 1)]), (6, (1, 6), Some(4)));
    }
}
