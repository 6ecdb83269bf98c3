//! Text measured and cut the way JavaScript sees it.
//!
//! Pi's sizes are `string.length`, which counts UTF-16 code units, so an emoji is 2
//! and a CJK character is 1. Cuts never split a character: a cut that would land
//! inside a surrogate pair stops before it.

/// Length in UTF-16 code units (JavaScript's `string.length`).
pub fn js_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The longest prefix of `s` whose JavaScript length is at most `max`.
pub fn js_prefix(s: &str, max: usize) -> &str {
    let mut used = 0;
    for (at, ch) in s.char_indices() {
        used += ch.len_utf16();
        if used > max {
            return &s[..at];
        }
    }
    s
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_len_counts_utf16_units() {
        assert_eq!(js_len("abc"), 3);
        assert_eq!(js_len("日本"), 2);
        assert_eq!(js_len("😀"), 2);
        assert_eq!(js_len(""), 0);
    }

    #[test]
    fn js_prefix_never_splits_a_surrogate_pair() {
        assert_eq!(js_prefix("a😀b", 2), "a");
        assert_eq!(js_prefix("a😀b", 3), "a😀");
        assert_eq!(js_prefix("日本語", 2), "日本");
        assert_eq!(js_prefix("abc", 10), "abc");
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
