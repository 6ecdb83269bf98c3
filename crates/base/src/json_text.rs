//! Writing JSON text by hand: a string literal, escaped exactly as
//! serde_json escapes it, eight bytes at a time.
//!
//! For: the few places that write large JSON themselves because serde_json's
//! escaping is slow at `opt-level = "z"` (the pass's wire format, the audit's
//! candidates). Not for: anything else; the rest of the core uses serde_json.

/// Appends `s` as a JSON string literal, escaped exactly as serde_json does:
/// `"` and `\` with a backslash, `\b \f \n \r \t`, other controls as
/// `\u00xx`; everything else (non-ASCII included) as it is.
pub fn push_str(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut run = 0; // start of the bytes not yet copied
    let mut i = 0;
    while i < bytes.len() {
        // Skip eight plain bytes at a time.
        if let Some(w) = bytes.get(i..i + 8) {
            if !needs_escape(crate::text::word(w)) {
                i += 8;
                continue;
            }
        }
        let Some(&c) = bytes.get(i) else { break };
        let escape: Option<&str> = match c {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            c if c < 0x20 => None,
            _ => {
                i += 1;
                continue;
            }
        };
        // Everything before `i` is plain; `i` is an ASCII byte, a char boundary.
        out.push_str(s.get(run..i).unwrap_or(""));
        match escape {
            Some(e) => out.push_str(e),
            None => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(c >> 4)]));
                out.push(char::from(HEX[usize::from(c & 15)]));
            }
        }
        i += 1;
        run = i;
    }
    out.push_str(s.get(run..).unwrap_or(""));
    out.push('"');
}

/// Whether any of eight bytes is `"`, `\` or below 0x20 (bit tricks: a zero
/// byte of `x ^ pattern` marks a match; a byte below 0x20 borrows in `x - 0x20`).
#[inline(always)]
fn needs_escape(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_in = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    let below_space = x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0;
    below_space || zero_in(x ^ (ONES * u64::from(b'"'))) || zero_in(x ^ (ONES * u64::from(b'\\')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serde(s: &str) -> String {
        serde_json::to_string(s).unwrap()
    }

    #[test]
    fn strings_escape_as_serde_json_does() {
        let mut all = String::new();
        for c in (0u32..0x80).filter_map(char::from_u32) {
            all.push(c);
        }
        let cases = [
            "",
            "plain",
            "exactly8",
            "a\"b\\c\nd\re\tf\u{8}g\u{c}h\u{1}i\u{1f}j\u{7f}",
            "日本語😀 \"quoted\" 😀",
            "0123456789abcdef\"0123456789abcdef",
            &all,
            "\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}",
        ];
        for s in cases {
            let mut out = String::new();
            push_str(&mut out, s);
            assert_eq!(out, serde(s), "{s:?}");
        }
        // Every position of every special byte inside a word.
        for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', ' ', '~', 'é'] {
            for at in 0..17 {
                let mut s = "x".repeat(16);
                s.insert(at, special);
                let mut out = String::new();
                push_str(&mut out, &s);
                assert_eq!(out, serde(&s));
            }
        }
    }
}
