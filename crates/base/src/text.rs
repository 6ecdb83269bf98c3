//! Text measured and cut the way JavaScript sees it.
//!
//! Pi's sizes are `string.length`, which counts UTF-16 code units, so an emoji is 2
//! and a CJK character is 1. Cuts never split a character: a cut that would land
//! inside a surrogate pair stops before it.

/// Eight bytes as a little-endian word. Written out so it inlines at
/// `opt-level = "z"` (a `copy_from_slice` there is a call per word); short
/// input reads as zero bytes.
#[inline(always)]
pub fn word(w: &[u8]) -> u64 {
    let b = |i: usize| u64::from(w.get(i).copied().unwrap_or(0));
    b(0) | b(1) << 8 | b(2) << 16 | b(3) << 24 | b(4) << 32 | b(5) << 40 | b(6) << 48 | b(7) << 56
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` that is zero (exact for the lowest such
/// byte; a higher one may be marked spuriously after it, so only the lowest
/// is read).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGH
}

/// Whether any of the eight bytes of `x` is below `n` (at most 0x80).
#[inline(always)]
pub fn any_byte_below(x: u64, n: u8) -> bool {
    x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH != 0
}

/// Whether any of the eight bytes of `x` is `b`.
#[inline(always)]
pub fn any_byte_is(x: u64, b: u8) -> bool {
    zero_bytes(x ^ (ONES * u64::from(b))) != 0
}

/// Index of the first `b` in `bytes`. Eight bytes at a time: the wasm build
/// is optimized for size, so a plain byte loop (or `memchr`, four bytes at a
/// time on wasm32) is what every line of a megabyte output would pay.
/// Inlined: it runs a few times per line, and at `opt-level = "z"` a call
/// costs more than a short search.
#[inline(always)]
pub fn find_byte(bytes: &[u8], b: u8) -> Option<usize> {
    let pattern = ONES * u64::from(b);
    let mut i = 0;
    while let Some(w) = bytes.get(i..i + 8) {
        let found = zero_bytes(word(w) ^ pattern);
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    while let Some(&c) = bytes.get(i) {
        if c == b {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The largest char boundary of `s` at or before `i`.
pub fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `a == b`, eight bytes at a time (the wasm build's `memcmp` compares byte
/// by byte; this runs on whole outputs).
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while let (Some(x), Some(y)) = (a.get(i..i + 8), b.get(i..i + 8)) {
        if word(x) != word(y) {
            return false;
        }
        i += 8;
    }
    while let (Some(x), Some(y)) = (a.get(i), b.get(i)) {
        if x != y {
            return false;
        }
        i += 1;
    }
    true
}

/// Length in UTF-16 code units (JavaScript's `string.length`).
///
/// Counted over bytes rather than chars because it runs over every line of a
/// megabyte output: each byte that starts a character counts 1, and a 4-byte
/// lead (a character outside the BMP, a surrogate pair in JS) counts 1 more.
/// Eight bytes at a time, since the wasm build is optimized for size and does
/// not vectorize a byte loop.
pub fn js_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut continuation = 0usize;
    let mut four_byte_leads = 0usize;
    // Sixteen bytes at a time; an ASCII pair of words (most of most outputs)
    // costs one test, so there is no separate `is_ascii` pass first. An
    // index loop, not `chunks_exact`: at `opt-level = "z"` the iterator's
    // `next` stays a call per step.
    let mut i = 0;
    while let Some(p) = bytes.get(i..i + 16) {
        i += 16;
        let (a, b) = (word(p.get(..8).unwrap_or(&[])), word(p.get(8..).unwrap_or(&[])));
        if (a | b) & HIGH == 0 {
            continue;
        }
        // Written out for both words (a two-element loop stays a loop at `opt-level = "z"`).
        // Bit 7 set and bit 6 clear: 10xxxxxx.
        continuation += ((a & !(a << 1) & HIGH).count_ones() + (b & !(b << 1) & HIGH).count_ones()) as usize;
        // Bits 7 to 4 set: 11110xxx.
        let four = |x: u64| (x & (x << 1) & (x << 2) & (x << 3) & HIGH).count_ones();
        four_byte_leads += (four(a) + four(b)) as usize;
    }
    for &b in bytes.get(i..).unwrap_or(&[]) {
        continuation += usize::from(b & 0xC0 == 0x80);
        four_byte_leads += usize::from(b >= 0xF0);
    }
    bytes.len() - continuation + four_byte_leads
}

/// The longest prefix of `s` whose JavaScript length is at most `max`.
pub fn js_prefix(s: &str, max: usize) -> &str {
    // By lead bytes rather than decoded characters: a four-byte character is
    // two UTF-16 units, any other one. Several times faster in the size-
    // optimized wasm, where the char iterator is not inlined.
    let bytes = s.as_bytes();
    let (mut at, mut used) = (0, 0usize);
    while let Some(&lead) = bytes.get(at) {
        let (len, units) = match lead {
            0..=0x7f => (1, 1),
            0xc0..=0xdf => (2, 1),
            0xe0..=0xef => (3, 1),
            _ => (4, 2),
        };
        used += units;
        if used > max {
            break;
        }
        at += len;
    }
    s.get(..at).unwrap_or(s)
}

/// Appends a whole number in decimal, as `format!("{n}")` writes it without
/// `core::fmt` (at `opt-level = "z"` a call chain per number; requests and
/// notes write thousands).
pub fn push_usize(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        if let Some(d) = digits.get_mut(at) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || at == 0 {
            break;
        }
    }
    // One copy of the digits (a `push` per digit encodes and reserves for each).
    out.push_str(std::str::from_utf8(digits.get(at..).unwrap_or(&[])).unwrap_or(""));
}

/// The longest suffix of `s` whose JavaScript length is at most `max`.
pub fn js_suffix(s: &str, max: usize) -> &str {
    // Whole, the usual case, found eight bytes at a time instead of a character at a time.
    if js_len(s) <= max {
        return s;
    }
    let mut used = 0;
    for (at, ch) in s.char_indices().rev() {
        used += ch.len_utf16();
        if used > max {
            return s.get(at + ch.len_utf8()..).unwrap_or("");
        }
    }
    s
}

/// The marker that stands for the middle `clip_middle` cut out.
pub const CLIP_MARK: &str = "\n[…]\n";

/// `s` cut to at most `max` JavaScript characters, keeping 70% head and the
/// tail around a `[…]` line (the original guard's clipping: the start of a
/// question or answer usually states it, the end usually concludes it).
///
/// When `max` is too small to hold the marker the head alone is kept.
pub fn clip_middle(s: &str, max: usize) -> String {
    if js_len(s) <= max {
        return s.to_string();
    }
    let mark = js_len(CLIP_MARK);
    if max <= mark + 1 {
        return js_prefix(s, max).to_string();
    }
    let room = max - mark;
    let head = room * 7 / 10;
    let tail = room - head;
    let mut out = String::with_capacity(max.saturating_mul(2));
    out.push_str(js_prefix(s, head));
    out.push_str(CLIP_MARK);
    out.push_str(js_suffix(s, tail));
    out
}

/// A count shown the way the status bar and the notes show sizes: `950`,
/// `1.2k`, `36.1k`, `1.3M` (one decimal above a thousand, rounded half up).
pub fn short_count(n: usize) -> String {
    if n < 1000 {
        return n.to_string();
    }
    let tenths_k = n.saturating_add(50) / 100;
    if tenths_k < 10_000 {
        return format!("{}.{}k", tenths_k / 10, tenths_k % 10);
    }
    let tenths_m = n.saturating_add(50_000) / 100_000;
    format!("{}.{}M", tenths_m / 10, tenths_m % 10)
}

/// The lines of `s` as JavaScript's `s.split("\n")` sees them, except that a
/// final newline does not start an empty last line. This is the line count
/// the notes give ("kept 9 of 410 lines").
pub fn line_count(s: &str) -> usize {
    if s.is_empty() {
        return 0;
    }
    let newlines = s.as_bytes().iter().filter(|&&b| b == b'\n').count();
    if s.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// One line safe to paint in a terminal, at most `max` JavaScript characters.
///
/// Only the first line is kept. Control characters (ANSI escapes, bells,
/// carriage returns, tabs, C1 controls) become spaces, runs of whitespace
/// collapse, and a clipped line ends with `…` inside the limit.
pub fn sanitize_line(s: &str, max: usize) -> String {
    let first = s.trim_start().split('\n').next().unwrap_or("");
    let mut out = String::with_capacity(first.len().min(max * 4));
    let mut last_space = true;
    for ch in first.chars() {
        let ch = if ch.is_control() || is_invisible_format(ch) { ' ' } else { ch };
        if ch.is_whitespace() {
            if !last_space {
                out.push(' ');
                last_space = true;
            }
        } else {
            out.push(ch);
            last_space = false;
        }
    }
    let trimmed = out.trim_end();
    if js_len(trimmed) <= max {
        return trimmed.to_string();
    }
    let mut clipped = js_prefix(trimmed, max.saturating_sub(1)).trim_end().to_string();
    clipped.push('…');
    clipped
}

/// Characters that draw nothing but can reorder or hide text on a terminal
/// (bidirectional overrides, zero-width joiners kept out of labels).
fn is_invisible_format(ch: char) -> bool {
    matches!(ch, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// `parts` joined by `sep`, exactly as `parts.join(sep)`: a small loop for
/// each element type, where `join`'s generic copy is ~1 KB of the `.wasm`
/// for each (`[String]` and `[&str]`).
pub fn join<S: AsRef<str>>(parts: &[S], sep: &str) -> String {
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(part.as_ref());
    }
    out
}

/// FNV-1a's start, and one byte of it: a hash that grows a byte at a time, so
/// a text's prefixes hash incrementally (the chunker's per-line maps, the
/// cache pin's prefix identities).
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

#[inline(always)]
pub fn fnv_step(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_is_slice_join() {
        let words = ["a", "", "bc", "日本"];
        for n in 0..=words.len() {
            for sep in ["", ", ", "\n\n"] {
                assert_eq!(join(&words[..n], sep), words[..n].join(sep));
                let owned: Vec<String> = words[..n].iter().map(|w| w.to_string()).collect();
                assert_eq!(join(&owned, sep), owned.join(sep));
            }
        }
    }

    #[test]
    fn push_usize_writes_what_format_writes() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, 1_000_000, usize::MAX / 7, usize::MAX] {
            let mut s = "x".to_string();
            push_usize(&mut s, n);
            assert_eq!(s, format!("x{n}"));
        }
    }

    #[test]
    fn js_len_counts_utf16_units() {
        assert_eq!(js_len("abc"), 3);
        assert_eq!(js_len("日本"), 2);
        assert_eq!(js_len("😀"), 2);
        assert_eq!(js_len(""), 0);
    }

    #[test]
    fn js_prefix_counts_as_the_characters_do() {
        let by_chars = |s: &str, max: usize| {
            let mut used = 0;
            s.char_indices()
                .find(|(_, ch)| {
                    used += ch.len_utf16();
                    used > max
                })
                .map_or(s.len(), |(at, _)| at)
        };
        let s = "a\u{7f}\u{80}é\u{7ff}\u{800}日\u{ffff}\u{10000}😀𝄞\u{10ffff}z";
        for max in 0..=js_len(s) + 1 {
            assert_eq!(js_prefix(s, max).len(), by_chars(s, max), "{max}");
        }
    }

    #[test]
    fn js_prefix_never_splits_a_surrogate_pair() {
        assert_eq!(js_prefix("a😀b", 2), "a");
        assert_eq!(js_prefix("a😀b", 3), "a😀");
        assert_eq!(js_prefix("日本語", 2), "日本");
        assert_eq!(js_prefix("abc", 10), "abc");
    }

    #[test]
    fn js_len_matches_a_count_over_chars() {
        for s in [
            "",
            "a",
            "é",
            "日本語",
            "😀x😀",
            "a\u{10FFFF}\u{7FF}\u{800}\u{FFFF}",
            "0123456😀日本語é𝄞abcdefgh\u{80}\u{10000}xyz😀😀😀😀😀",
        ] {
            assert_eq!(js_len(s), s.chars().map(char::len_utf16).sum::<usize>(), "{s:?}");
        }
    }

    #[test]
    fn js_len_counts_every_position_of_every_width() {
        // Each width of character at every offset of a 40-byte string, across
        // the 16-byte steps and the tail.
        for ch in ['é', '日', '😀', 'a'] {
            for len in 0..40 {
                for at in 0..=len {
                    let mut s = "x".repeat(len);
                    s.insert(at, ch);
                    assert_eq!(js_len(&s), s.chars().map(char::len_utf16).sum::<usize>(), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn byte_helpers_agree_with_plain_loops() {
        for len in 0..20 {
            for at in 0..len {
                for b in [b'\n', b':', b'-', 0u8, 0xff] {
                    let mut v = vec![b'x'; len];
                    v[at] = b;
                    assert_eq!(find_byte(&v, b), v.iter().position(|&x| x == b), "{v:?}");
                    let mut w = v.clone();
                    assert!(same_bytes(&v, &w));
                    w[at] = b'y';
                    assert!(!same_bytes(&v, &w));
                }
            }
            assert_eq!(find_byte(&vec![b'x'; len], b'-'), None);
            assert!(!same_bytes(&vec![b'x'; len], &vec![b'x'; len + 1]));
        }
        for b in 0..=255u8 {
            let x = u64::from_le_bytes([b'a', b'b', b, b'c', b'd', b'e', b'f', b'g']);
            assert_eq!(any_byte_below(x, 0x21), b < 0x21, "{b}");
            assert_eq!(any_byte_is(x, 0x7f), b == 0x7f, "{b}");
        }
    }

    #[test]
    fn js_suffix_never_splits_a_surrogate_pair() {
        assert_eq!(js_suffix("a😀b", 2), "b");
        assert_eq!(js_suffix("a😀b", 3), "😀b");
        assert_eq!(js_suffix("日本語", 2), "本語");
        assert_eq!(js_suffix("abc", 0), "");
        assert_eq!(js_suffix("abc", 9), "abc");
    }

    #[test]
    fn clip_middle_keeps_head_and_tail_within_the_limit() {
        assert_eq!(clip_middle("short", 10), "short");
        let long = format!("{}{}", "h".repeat(100), "t".repeat(100));
        let clipped = clip_middle(&long, 105);
        assert_eq!(js_len(&clipped), 105);
        assert!(clipped.starts_with(&"h".repeat(70)));
        assert!(clipped.contains("\n[…]\n"));
        assert!(clipped.ends_with(&"t".repeat(30)));
        let emoji = "😀".repeat(100);
        let clipped = clip_middle(&emoji, 51);
        assert!(js_len(&clipped) <= 51);
        assert!(clipped.starts_with("😀"));
        assert!(clipped.ends_with("😀"));
        assert_eq!(clip_middle("abcdefgh", 3), "abc");
    }

    #[test]
    fn short_count_has_one_decimal_above_a_thousand() {
        assert_eq!(short_count(0), "0");
        assert_eq!(short_count(999), "999");
        assert_eq!(short_count(1000), "1.0k");
        assert_eq!(short_count(1234), "1.2k");
        assert_eq!(short_count(36_149), "36.1k");
        assert_eq!(short_count(36_150), "36.2k");
        assert_eq!(short_count(999_949), "999.9k");
        assert_eq!(short_count(999_950), "1.0M");
        assert_eq!(short_count(12_345_678), "12.3M");
        assert_eq!(short_count(usize::MAX).chars().last(), Some('M'));
    }

    #[test]
    fn line_count_ignores_a_final_newline() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a"), 1);
        assert_eq!(line_count("a\n"), 1);
        assert_eq!(line_count("a\nb"), 2);
        assert_eq!(line_count("\n\n"), 2);
    }

    #[test]
    fn sanitize_line_removes_terminal_controls() {
        assert_eq!(sanitize_line("\x1b[31mred\x1b[0m\x07 bell\rcr\ttab", 80), "[31mred [0m bell cr tab");
        assert_eq!(sanitize_line("first\nsecond", 80), "first");
        assert_eq!(sanitize_line("a\u{202e}b", 80), "a b");
    }

    #[test]
    fn sanitize_line_clips_with_an_ellipsis_inside_the_limit() {
        let line = sanitize_line(&"x".repeat(50), 40);
        assert_eq!(js_len(&line), 40);
        assert!(line.ends_with('…'));
        let emoji = sanitize_line(&"😀".repeat(30), 9);
        assert!(js_len(&emoji) <= 9);
        assert!(emoji.ends_with('…'));
    }
}
