//! Substring search for `a in b` on strings, which grep-like loops run once a
//! line. The standard library's search sets up a Two-Way searcher per call
//! unless the haystack is 16 bytes longer than the needle, and its SIMD loop
//! costs more per line than this one; `memchr::memmem` builds a searcher per
//! call too.

/// Whether `needle` occurs in `hay`.
pub fn contains(hay: &str, needle: &str) -> bool {
    let (hay, needle) = (hay.as_bytes(), needle.as_bytes());
    match needle.len() {
        0 => true,
        1 => memchr::memchr(needle[0], hay).is_some(),
        #[cfg(target_arch = "x86_64")]
        n if hay.len() >= n + 32 && std::is_x86_feature_detected!("avx2") => {
            // SAFETY: the CPU has AVX2.
            unsafe { wide_blocks(hay, needle) }
        }
        n if hay.len() >= n + 16 => blocks(hay, needle),
        n => match hay.len().checked_sub(n) {
            Some(last) => (0..=last).any(|i| hay[i] == needle[0] && hay[i + 1..i + n] == needle[1..]),
            None => false,
        },
    }
}

/// Sixteen start positions at a time: those where both the needle's first and
/// last bytes match are compared in full. Needs `hay.len() >= needle.len() + 15`
/// and a needle of at least 2 bytes.
#[cfg(target_arch = "x86_64")]
fn blocks(hay: &[u8], needle: &[u8]) -> bool {
    use std::arch::x86_64::*;
    let n = needle.len();
    let starts = hay.len() - n + 1;
    debug_assert!(n >= 2 && starts >= 16);
    // SAFETY: SSE2 is part of x86_64. Every load reads 16 bytes from `i` or
    // `i + n - 1` with `i + 16 <= starts`, so the last byte read is at most
    // `starts - 1 + n - 1 = hay.len() - 1`.
    unsafe {
        let first = _mm_set1_epi8(needle[0] as i8);
        let last = _mm_set1_epi8(needle[n - 1] as i8);
        let mut i = 0;
        while i < starts {
            // The last block overlaps the one before rather than reading past the end.
            i = i.min(starts - 16);
            let a = _mm_loadu_si128(hay.as_ptr().add(i).cast());
            let b = _mm_loadu_si128(hay.as_ptr().add(i + n - 1).cast());
            let eq = _mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last));
            let mut mask = _mm_movemask_epi8(eq) as u32;
            while mask != 0 {
                let j = i + mask.trailing_zeros() as usize;
                if hay[j + 1..j + n - 1] == needle[1..n - 1] {
                    return true;
                }
                mask &= mask - 1;
            }
            i += 16;
        }
    }
    false
}

/// `blocks` with thirty-two start positions at a time, for lines long
/// enough to fill them: half the steps on a typical line of text. Needs
/// `hay.len() >= needle.len() + 31` and a needle of at least 2 bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn wide_blocks(hay: &[u8], needle: &[u8]) -> bool {
    use std::arch::x86_64::*;
    let n = needle.len();
    let starts = hay.len() - n + 1;
    debug_assert!(n >= 2 && starts >= 32);
    // SAFETY: as in `blocks`, with 32 for 16: the last byte read is at most
    // `hay.len() - 1`.
    unsafe {
        let first = _mm256_set1_epi8(needle[0] as i8);
        let last = _mm256_set1_epi8(needle[n - 1] as i8);
        let mut i = 0;
        while i < starts {
            i = i.min(starts - 32);
            let a = _mm256_loadu_si256(hay.as_ptr().add(i).cast());
            let b = _mm256_loadu_si256(hay.as_ptr().add(i + n - 1).cast());
            let eq = _mm256_and_si256(_mm256_cmpeq_epi8(a, first), _mm256_cmpeq_epi8(b, last));
            let mut mask = _mm256_movemask_epi8(eq) as u32;
            while mask != 0 {
                let j = i + mask.trailing_zeros() as usize;
                if hay[j + 1..j + n - 1] == needle[1..n - 1] {
                    return true;
                }
                mask &= mask - 1;
            }
            i += 32;
        }
    }
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn blocks(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

#[cfg(test)]
mod tests {
    #[test]
    fn agrees_with_the_standard_search_on_short_and_long_haystacks() {
        let needles = ["", "a", "ab", "ja", "needle", "é", "xneedles", "line ", "jabcdefghijabcdefghij"];
        for n in 0..110 {
            for at in [None, Some(0), Some(n / 3), Some(n / 2), Some(n)] {
                let mut hay: String = "abcdefghij".chars().cycle().take(n).collect();
                if let Some(at) = at {
                    hay.insert_str(at, "needle");
                }
                for end in ["", "é", "needle"] {
                    let hay = format!("{hay}{end}");
                    for needle in needles {
                        assert_eq!(super::contains(&hay, needle), hay.contains(needle), "{needle:?} in {hay:?}");
                    }
                }
            }
        }
    }
}
