//! The secrets step over arbitrary text (issue 18): it never panics, what it
//! finds is in order, inside the text, on character boundaries and never
//! overlapping, and the text it sends is exactly the text between the
//! secrets with a placeholder for each: no byte of a span it matched gets
//! through. The same holds for chunks cut anywhere (a secret across a
//! chunk's edge is withheld on both sides).
#![no_main]

use context_guard_scan::secrets::{redacted, Found, Secrets};
use libfuzzer_sys::fuzz_target;

/// The text as the step should send it: the pieces between the spans, a placeholder for each span.
fn expected(text: &str, found: &[Found]) -> String {
    let mut out = String::new();
    let mut at = 0;
    for f in found {
        out.push_str(&text[at..f.start]);
        out.push_str("[secret: ");
        out.push_str(f.kind);
        out.push(']');
        at = f.end;
    }
    out.push_str(&text[at..]);
    out
}

fuzz_target!(|data: &[u8]| {
    let input = String::from_utf8_lossy(data);
    // An optional user pattern before a NUL, as `secretPatterns` would give it.
    let (patterns, text) = match input.split_once('\u{0}') {
        Some((p, t)) if p.len() < 64 => (vec![p.to_string()], t),
        _ => (Vec::new(), input.as_ref()),
    };
    let secrets = Secrets::new(&patterns);
    let found = secrets.find(text);
    let mut at = 0;
    for f in &found {
        assert!(f.start >= at && f.end > f.start && f.end <= text.len(), "{found:?}");
        assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
        at = f.end;
    }
    assert_eq!(redacted(text, &found), expected(text, &found));

    // Cut into chunks at character boundaries chosen by the input.
    let mut cuts = vec![0];
    for (i, &b) in data.iter().enumerate().take(16) {
        let mut c = (usize::from(b) * 37 + i * 101) % (text.len() + 1);
        while !text.is_char_boundary(c) {
            c -= 1;
        }
        cuts.push(c);
    }
    cuts.push(text.len());
    cuts.sort_unstable();
    cuts.dedup();
    for w in cuts.windows(2) {
        let (a, z) = (w[0], w[1]);
        let inside: Vec<Found> = found
            .iter()
            .filter(|f| f.start < z && f.end > a)
            .map(|f| Found { start: f.start.max(a) - a, end: f.end.min(z) - a, kind: f.kind })
            .collect();
        assert_eq!(redacted(&text[a..z], &inside), expected(&text[a..z], &inside));
    }
});
