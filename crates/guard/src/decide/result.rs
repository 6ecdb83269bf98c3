//! The decision for one large output from its segments' verdicts
//! (docs/GUARD.md, "What it judges"): the union of their keep sets, `keepCitedFiles`,
//! `maxKeepRatio` and `not-worth`, and the replacement `render` writes.

use serde::Serialize;

use crate::chunk::{Chunk, Segment};
use crate::render::{render, Distill, Numbering, Rendered, Verbatim};
use crate::settings::Settings;
use crate::text::js_len;

use super::verdict::{Reason, Verdict};

/// What happens to one output.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "ResultOutcome"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Kept,
    Distilled,
    Removed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Kept => "kept",
            Outcome::Distilled => "distilled",
            Outcome::Removed => "removed",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        [Outcome::Kept, Outcome::Distilled, Outcome::Removed].into_iter().find(|o| o.as_str() == s)
    }
}

/// One output with its chunks and the verdict of each segment.
#[derive(Debug, Clone, Copy)]
pub struct ResultInput<'a> {
    pub text: &'a str,
    pub chunks: &'a [Chunk],
    pub grep: bool,
    /// Each segment with its verdict (oversize segments included).
    pub segments: &'a [(Segment, Verdict)],
    /// The run's final answer (for `keepCitedFiles`).
    pub answer: &'a str,
    pub label: &'a str,
    pub entry_id: &'a str,
    pub numbering: Numbering,
    pub lines: usize,
    pub chars: usize,
}

/// The decision for one output.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub outcome: Outcome,
    /// Distinct segment reasons in order, joined by `,`; or `not-worth`.
    pub reason: String,
    /// The replacement text when the outcome is an edit.
    pub replacement: Option<String>,
    /// Where the kept chunks are in it (see `render::render`).
    pub verbatim: Vec<Verbatim>,
    pub after_chars: usize,
    /// Segment traces joined by ` | `.
    pub trace: String,
    /// One flag per chunk.
    pub keep: Vec<bool>,
}

/// The per-result rule: the union of the segments' keep sets; all
/// kept → no edit; `keepCitedFiles` adds grep chunks of files the answer
/// names; more than `maxKeepRatio` kept, or a replacement not shorter than
/// the original → no edit (`not-worth`); else `distilled`, or `removed` when
/// nothing is kept.
pub fn decide_result(r: &ResultInput, s: &Settings) -> Decision {
    let mut keep = vec![true; r.chunks.len()];
    let mut reasons: Vec<Reason> = Vec::new();
    let mut traces: Vec<&str> = Vec::new();
    for (seg, verdict) in r.segments {
        for (i, slot) in keep.iter_mut().enumerate().skip(seg.first).take(seg.count) {
            *slot = verdict.keep.get(i - seg.first).copied().unwrap_or(true);
        }
        if !reasons.contains(&verdict.reason) {
            reasons.push(verdict.reason);
        }
        traces.push(&verdict.trace);
    }
    let reason: Vec<&str> = reasons.iter().map(|r| r.as_str()).collect();
    let reason = crate::text::join(&reason, ",");
    let trace = crate::text::join(&traces, " | ");
    let kept = |reason: String, keep: Vec<bool>| Decision {
        outcome: Outcome::Kept,
        reason,
        replacement: None,
        verbatim: Vec::new(),
        after_chars: r.chars,
        trace: trace.clone(),
        keep,
    };

    if keep.iter().all(|k| *k) {
        return kept(reason, keep);
    }
    if s.keep_cited_files && r.grep && !r.answer.is_empty() {
        let cited = Cited::new(r.answer);
        for (c, slot) in r.chunks.iter().zip(keep.iter_mut()) {
            if !*slot && c.files.iter().any(|f| cited.names(f)) {
                *slot = true;
            }
        }
        if keep.iter().all(|k| *k) {
            return kept(reason, keep);
        }
    }
    let kept_chars: usize = r.chunks.iter().zip(&keep).filter(|(_, k)| **k).map(|(c, _)| c.chars).sum();
    if kept_chars as f64 > s.max_keep_ratio * r.chars as f64 {
        return kept(Reason::NotWorth.as_str().to_string(), keep);
    }
    let distill = Distill {
        text: r.text,
        chunks: r.chunks,
        keep: &keep,
        label: r.label,
        entry_id: r.entry_id,
        numbering: r.numbering,
        lines: r.lines,
        chars: r.chars,
    };
    let Some(Rendered { text, verbatim }) = render(&distill) else {
        return kept(Reason::BadPlan.as_str().to_string(), keep);
    };
    let after = js_len(&text);
    if after >= r.chars {
        return kept(Reason::NotWorth.as_str().to_string(), keep);
    }
    let outcome = if keep.iter().any(|k| *k) { Outcome::Distilled } else { Outcome::Removed };
    Decision { outcome, reason, replacement: Some(text), verbatim, after_chars: after, trace, keep }
}

/// The file names an answer mentions (for `keepCitedFiles`): path-like words,
/// without trailing punctuation or `:line` suffixes. A file is cited when its
/// path equals a mentioned one, one ends with the other after a `/`
/// (`src/a.ts` and `/repo/src/a.ts`), or a bare file name equals its last part.
/// Built once per answer, then each file is a few set lookups.
pub struct Cited {
    /// Mentioned paths, sorted.
    paths: Vec<String>,
    /// Every `/`-suffix of every mentioned path, sorted.
    suffixes: Vec<String>,
}

fn sorted_has(list: &[String], s: &str) -> bool {
    list.binary_search_by(|x| x.as_str().cmp(s)).is_ok()
}

impl Cited {
    pub fn new(answer: &str) -> Cited {
        let mut paths = Vec::new();
        let mut suffixes = Vec::new();
        let separators = |c: char| c.is_whitespace() || "`\"'()[]{}<>,;|*".contains(c);
        for word in answer.split(separators) {
            let word = strip_location(word.trim_end_matches(['.', ':', '!', '?']));
            let word = word.strip_prefix("./").unwrap_or(word);
            if word.is_empty() || !(word.contains('.') || word.contains('/')) {
                continue;
            }
            let mut rest = word;
            while let Some((_, tail)) = rest.split_once('/') {
                if !tail.is_empty() {
                    suffixes.push(tail.to_string());
                }
                rest = tail;
            }
            suffixes.push(word.to_string());
            paths.push(word.to_string());
        }
        // Equal strings are alike, so the shared stable sort gives what
        // `sort_unstable` gave.
        crate::order::sort_by(&mut paths, String::cmp);
        crate::order::sort_by(&mut suffixes, String::cmp);
        Cited { paths, suffixes }
    }

    pub fn names(&self, file: &str) -> bool {
        let file = file.strip_prefix("./").unwrap_or(file);
        if sorted_has(&self.suffixes, file) {
            return true;
        }
        let mut rest = file;
        loop {
            if sorted_has(&self.paths, rest) {
                return true;
            }
            match rest.split_once('/') {
                Some((_, tail)) => rest = tail,
                None => return false,
            }
        }
    }
}

/// `a.ts:12`, `a.ts:12:3` and `a.ts#L12` without their location.
fn strip_location(word: &str) -> &str {
    // The last `#L` (by bytes: a two-byte pattern needs no string searcher).
    let bytes = word.as_bytes();
    let mark = (0..bytes.len().saturating_sub(1)).rev().find(|&i| bytes.get(i..i + 2) == Some(b"#L"));
    let word = match mark.and_then(|i| Some((word.get(..i)?, word.get(i + 2..)?))) {
        Some((head, tail))
            if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit() || b == b'-' || b == b'L') =>
        {
            head
        }
        _ => word,
    };
    let mut w = word;
    for _ in 0..2 {
        match w.rsplit_once(':') {
            Some((head, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => w = head,
            _ => break,
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::chunk;

    fn s() -> Settings {
        Settings::default()
    }

    fn verdict(keep: Vec<bool>, reason: Reason) -> Verdict {
        Verdict { keep, reason, trace: "t".into() }
    }

    #[test]
    fn per_result_union_not_worth_and_removal() {
        let text: String = (0..400).map(|i| format!("{i:03} {}\n", "x".repeat(36))).collect();
        let c = chunk(&text);
        let n = c.chunks.len();
        assert!(n >= 10);
        let half = n / 2;
        let segs = [
            Segment { first: 0, count: half, chars: 0, oversize: false },
            Segment { first: half, count: n - half, chars: 0, oversize: false },
        ];
        let input = |segments: &'static [(Segment, Verdict)]| ResultInput {
            text: Box::leak(text.clone().into_boxed_str()),
            chunks: Box::leak(c.chunks.clone().into_boxed_slice()),
            grep: false,
            segments,
            answer: "",
            label: "bash `x`",
            entry_id: "e1",
            numbering: Numbering::Output,
            lines: 400,
            chars: js_len(&text),
        };
        let leak = |v: Vec<(Segment, Verdict)>| -> &'static [(Segment, Verdict)] { Box::leak(v.into_boxed_slice()) };

        // One chunk kept in the first segment, the second removed.
        let mut k1 = vec![false; half];
        k1[1] = true;
        let d = decide_result(
            &input(leak(vec![
                (segs[0], verdict(k1, Reason::Chunks)),
                (segs[1], verdict(vec![false; n - half], Reason::NoneNeeded)),
            ])),
            &s(),
        );
        assert_eq!(d.outcome, Outcome::Distilled);
        assert_eq!(d.reason, "chunks,none-needed");
        assert_eq!(d.trace, "t | t");
        assert!(d.after_chars < js_len(&text));
        assert!(d.replacement.as_deref().unwrap().starts_with("[context-guard] Distilled"));

        // A failed segment keeps its chunks; over maxKeepRatio → not-worth.
        let d = decide_result(
            &input(leak(vec![
                (segs[0], verdict(vec![true; half], Reason::Timeout)),
                (segs[1], verdict(vec![true; n - half], Reason::WholeNeeded)),
            ])),
            &s(),
        );
        assert_eq!((d.outcome, d.reason.as_str()), (Outcome::Kept, "timeout,whole-needed"));
        assert!(d.replacement.is_none());
        let d = decide_result(
            &input(leak(vec![
                (segs[0], verdict(vec![true; half], Reason::Error)),
                (segs[1], verdict(vec![false; n - half], Reason::NoneNeeded)),
            ])),
            &Settings { max_keep_ratio: 0.3, ..s() },
        );
        assert_eq!((d.outcome, d.reason.as_str()), (Outcome::Kept, "not-worth"));

        // Nothing kept anywhere → removed, one line.
        let d = decide_result(
            &input(leak(vec![
                (segs[0], verdict(vec![false; half], Reason::NoneNeeded)),
                (segs[1], verdict(vec![false; n - half], Reason::NoneNeeded)),
            ])),
            &s(),
        );
        assert_eq!(d.outcome, Outcome::Removed);
        assert_eq!(d.replacement.as_deref().unwrap().lines().count(), 1);
    }

    #[test]
    fn a_replacement_not_shorter_is_not_worth_it() {
        // Two tiny chunks: the header alone is longer than the output.
        let text = "a\n\nb\n";
        let chunks = vec![
            Chunk { start: 0, end: 2, first_line: 0, lines: 1, chars: 2, files: vec![] },
            Chunk { start: 2, end: 5, first_line: 1, lines: 2, chars: 3, files: vec![] },
        ];
        let seg = Segment { first: 0, count: 2, chars: 5, oversize: false };
        let segments = [(seg, verdict(vec![false, true], Reason::Chunks))];
        let r = ResultInput {
            text,
            chunks: &chunks,
            grep: false,
            segments: &segments,
            answer: "",
            label: "bash",
            entry_id: "e",
            numbering: Numbering::Output,
            lines: 3,
            chars: 5,
        };
        let d = decide_result(&r, &Settings { max_keep_ratio: 1.0, ..s() });
        assert_eq!((d.outcome, d.reason.as_str()), (Outcome::Kept, "not-worth"));
    }

    #[test]
    fn keep_cited_files_adds_grep_chunks_of_named_files() {
        let mut text = String::new();
        for f in ["src/status.ts", "src/other.ts", "test/fixtures/entities.json"] {
            for i in 1..=30 {
                text.push_str(&format!("{f}:{i}:{}\n", "s".repeat(40)));
            }
        }
        let c = chunk(&text);
        assert!(c.grep);
        let n = c.chunks.len();
        let seg = Segment { first: 0, count: n, chars: 0, oversize: false };
        let segments = [(seg, verdict(vec![false; n], Reason::NoneNeeded))];
        let r = ResultInput {
            text: &text,
            chunks: &c.chunks,
            grep: true,
            segments: &segments,
            answer: "Status is handled in `./src/status.ts:12`.",
            label: "bash",
            entry_id: "e",
            numbering: Numbering::Grep,
            lines: 90,
            chars: js_len(&text),
        };
        let off = decide_result(&r, &s());
        assert_eq!(off.outcome, Outcome::Removed);
        let on = decide_result(&r, &Settings { keep_cited_files: true, ..s() });
        assert_eq!(on.outcome, Outcome::Distilled);
        for (chunk, k) in c.chunks.iter().zip(&on.keep) {
            assert_eq!(*k, chunk.files.contains(&"src/status.ts".to_string()));
        }
    }

    #[test]
    fn cited_files() {
        let c = Cited::new("See /repo/src/a.ts#L3, lib/b.rs:10:2 and c.md. Not d");
        assert!(c.names("src/a.ts"));
        assert!(c.names("./src/a.ts"));
        assert!(c.names("lib/b.rs"));
        assert!(c.names("x/lib/b.rs"));
        assert!(!c.names("other/b.rs"));
        assert!(c.names("docs/c.md"));
        assert!(!c.names("d"));
    }
}
