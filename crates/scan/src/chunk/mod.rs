//! Splitting one tool output into chunks, and chunks into segments
//! (docs/GUARD.md, "What it judges").
//!
//! For: turning an output's text into numbered pieces the classifier can judge
//! one by one, and grouping the pieces into requests. Not for: what a request
//! says (`decide`) or how kept and removed pieces read (`render`).
//!
//! Chunks are ranges of whole lines of the output and cover it exactly, in
//! order, so the kept ones can be copied verbatim. Sizes are JavaScript
//! characters (the classifier's budget and Pi's sizes are counted that way).
//!
//! Here: the chunk and segment types, the target size, the lines, plain
//! output's windows and the segments. grep-style output (telling it apart,
//! the file of each line, grouping by file) is [`grep`], which cuts a large
//! file's group with the same windows.
//!
//! Cost: a megabyte of output must chunk in a few milliseconds (a run-end
//! pass has 15 ms for 1 MB), so every step is linear in the text: lines are
//! parsed by hand (no regex per line).

pub mod grep;

pub use grep::FastMap;

use crate::text::{find_byte, js_len};

/// The smallest chunk target, in characters.
pub const MIN_TARGET: usize = 800;
/// About this many chunks per output at most (the target is `ceil(len / 120)`).
pub const MAX_CHUNKS: usize = 120;
/// The target's cap for outputs up to about 480k characters; above that
/// the target grows so the chunk count stays near [`MAX_CHUNKS`].
pub const CAPPED_TARGET: usize = 4000;
/// Outputs above this many characters get a target above [`CAPPED_TARGET`].
pub const CAP_UNTIL: usize = 480_000;

/// A range of whole lines of one output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Byte offset of its first line in the output.
    pub start: usize,
    /// Byte offset after its last line, newline included.
    pub end: usize,
    /// Index (0-based) of its first line in the output.
    pub first_line: usize,
    /// Number of lines.
    pub lines: usize,
    /// JavaScript characters, its final newline included: the chunks' sizes
    /// add up to the output's.
    pub chars: usize,
    /// For grep-style output: the files its lines belong to, in order.
    pub files: Vec<String>,
}

/// An output cut into chunks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chunked {
    /// The output looked like `grep -n` / `rg -n` output and was grouped by file.
    pub grep: bool,
    /// The target chunk size used.
    pub target: usize,
    pub chunks: Vec<Chunk>,
}

/// Consecutive chunks sent in one classifier request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Index of its first chunk.
    pub first: usize,
    /// Number of chunks.
    pub count: usize,
    pub chars: usize,
    /// A single chunk larger than `maxSegmentChars`: never sent, kept (`oversize`).
    pub oversize: bool,
}

/// The target chunk size for an output of `chars` characters:
/// `max(800, ceil(len / 120))`, capped at 4,000 unless the output exceeds
/// ~480k characters.
pub fn target_size(chars: usize) -> usize {
    let t = MIN_TARGET.max(chars.div_ceil(MAX_CHUNKS));
    if chars <= CAP_UNTIL {
        t.min(CAPPED_TARGET)
    } else {
        t
    }
}

/// The text of a chunk as sent and as kept, without its final newline. `None`
/// if the range does not fit the text (a plan that came back altered).
pub fn chunk_text<'a>(text: &'a str, chunk: &Chunk) -> Option<&'a str> {
    let t = text.get(chunk.start..chunk.end)?;
    Some(t.strip_suffix('\n').unwrap_or(t))
}

/// One line of the output.
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    /// Before the newline.
    end: usize,
    /// After the newline (or the end of the text).
    next: usize,
    /// JavaScript characters, newline included.
    chars: usize,
    /// Empty or whitespace only.
    blank: bool,
    /// `--`, grep's separator between context groups.
    separator: bool,
}

fn split_lines(text: &str) -> Vec<Line> {
    let bytes = text.as_bytes();
    // An ASCII output (most grep and log output) needs no count per line.
    let ascii = text.is_ascii();
    let mut out = Vec::with_capacity(text.len() / 40 + 1);
    let mut pos = 0;
    while let Some(rest) = bytes.get(pos..).filter(|r| !r.is_empty()) {
        let len = find_byte(rest, b'\n').unwrap_or(rest.len());
        let end = pos + len;
        let next = if end < bytes.len() { end + 1 } else { end };
        let body = text.get(pos..end).unwrap_or("");
        // Blank: ASCII whitespace only, or (with other characters) whitespace
        // by `trim`. The first other byte decides most lines at once.
        let blank = match body.bytes().find(|b| !b.is_ascii_whitespace()) {
            None => true,
            Some(b) if b.is_ascii() && b != 0x0b => false,
            Some(_) if body.is_ascii() => false,
            Some(_) => body.trim().is_empty(),
        };
        let chars = if ascii || body.is_ascii() { len } else { js_len(body) };
        let separator = !blank && body.len() < 16 && body.trim() == "--";
        out.push(Line { start: pos, end, next, chars: chars + usize::from(next > end), blank, separator });
        pos = next;
    }
    out
}

/// Cuts an output into chunks: grep-style output by file, anything else in windows.
pub fn chunk(text: &str) -> Chunked {
    let lines = split_lines(text);
    let total: usize = lines.iter().map(|l| l.chars).sum();
    let target = target_size(total);
    if let Some((files, names)) = grep::grep_files(text, &lines) {
        Chunked { grep: true, target, chunks: grep::grep_chunks(&lines, &files, &names, target) }
    } else {
        Chunked { grep: false, target, chunks: windows(&lines, 0, lines.len(), target, &[]) }
    }
}

/// Consecutive chunks in segments of at most `max_chars` characters and
/// `max_chunks` chunks; a chunk larger than `max_chars` is a segment of its
/// own, marked `oversize` (kept, never sent).
pub fn segments(chunks: &[Chunk], max_chars: usize, max_chunks: usize) -> Vec<Segment> {
    let max_chunks = max_chunks.max(1);
    let mut out = Vec::new();
    let mut cur = Segment { first: 0, count: 0, chars: 0, oversize: false };
    for (i, c) in chunks.iter().enumerate() {
        if c.chars > max_chars {
            if cur.count > 0 {
                out.push(cur);
            }
            out.push(Segment { first: i, count: 1, chars: c.chars, oversize: true });
            cur = Segment { first: i + 1, count: 0, chars: 0, oversize: false };
            continue;
        }
        if cur.count > 0 && (cur.chars.saturating_add(c.chars) > max_chars || cur.count >= max_chunks) {
            out.push(cur);
            cur = Segment { first: i, count: 0, chars: 0, oversize: false };
        }
        cur.count += 1;
        cur.chars = cur.chars.saturating_add(c.chars);
    }
    if cur.count > 0 {
        out.push(cur);
    }
    out
}

// ---------------------------------------------------------------------------
// plain output

fn make_chunk(lines: &[Line], first: usize, end: usize, files: Vec<String>) -> Chunk {
    let part = lines.get(first..end).unwrap_or(&[]);
    Chunk {
        start: part.first().map_or(0, |l| l.start),
        end: part.last().map_or(0, |l| l.next),
        first_line: first,
        lines: part.len(),
        chars: {
            let mut chars = 0;
            let mut i = 0;
            while let Some(l) = part.get(i) {
                chars += l.chars;
                i += 1;
            }
            chars
        },
        files,
    }
}

/// Windows of about `target` characters over lines `first..end`: when a
/// window is full and a blank line fell in its last 40%, it ends after that
/// blank line; a single line longer than the target is a chunk of its own.
fn windows(lines: &[Line], first: usize, end: usize, target: usize, files: &[String]) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut win_first = first;
    let mut win_chars = 0usize;
    // The last blank line of the window, and the window's size through it.
    let mut last_blank: Option<(usize, usize)> = None;
    let chunk = |a: usize, b: usize| make_chunk(lines, a, b, files.to_vec());
    for i in first..end {
        let Some(line) = lines.get(i) else { break };
        if line.chars > target {
            if i > win_first {
                out.push(chunk(win_first, i));
            }
            out.push(chunk(i, i + 1));
            win_first = i + 1;
            win_chars = 0;
            last_blank = None;
            continue;
        }
        if win_chars > 0 && win_chars.saturating_add(line.chars) > target {
            match last_blank {
                Some((b, through)) if through.saturating_mul(10) >= target.saturating_mul(6) => {
                    out.push(chunk(win_first, b + 1));
                    win_first = b + 1;
                    win_chars = win_chars.saturating_sub(through);
                }
                _ => {
                    out.push(chunk(win_first, i));
                    win_first = i;
                    win_chars = 0;
                }
            }
            last_blank = None;
        }
        win_chars = win_chars.saturating_add(line.chars);
        if line.blank {
            last_blank = Some((i, win_chars));
        }
    }
    if win_first < end {
        out.push(chunk(win_first, end));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts<'a>(text: &'a str, c: &Chunked) -> Vec<&'a str> {
        c.chunks.iter().map(|k| chunk_text(text, k).unwrap()).collect()
    }

    /// Chunks cover the text exactly, in order, with consistent counts.
    pub(super) fn check_cover(text: &str, c: &Chunked) {
        let mut pos = 0;
        let mut line = 0;
        let mut chars = 0;
        for k in &c.chunks {
            assert_eq!(k.start, pos);
            assert_eq!(k.first_line, line);
            assert!(k.end > k.start);
            let t = text.get(k.start..k.end).unwrap();
            assert_eq!(js_len(t), k.chars);
            assert_eq!(crate::text::line_count(t), k.lines);
            pos = k.end;
            line += k.lines;
            chars += k.chars;
        }
        assert_eq!(pos, text.len());
        assert_eq!(chars, js_len(text));
        assert_eq!(line, crate::text::line_count(text));
    }

    #[test]
    fn target_follows_the_rule() {
        assert_eq!(target_size(0), 800);
        assert_eq!(target_size(96_000), 800);
        assert_eq!(target_size(120_000), 1000);
        assert_eq!(target_size(480_000), 4000);
        assert_eq!(target_size(480_001), 4001);
        assert_eq!(target_size(1_200_000), 10_000);
    }

    #[test]
    fn plain_windows_end_after_a_late_blank_line() {
        // Paragraphs of 700 characters: the blank line after each falls in the
        // last 40% of an 800-character window.
        let para = format!("{}\n", "p".repeat(99)).repeat(7);
        let text = format!("{para}\n{para}\n{para}");
        let c = chunk(&text);
        assert!(!c.grep);
        check_cover(&text, &c);
        let t = texts(&text, &c);
        assert_eq!(t.len(), 3);
        assert!(t[0].ends_with("p\n"), "the first chunk ends with its blank line");
        assert!(t[1].starts_with('p'));

        // An early blank line does not end the window.
        let text = format!("{}\n\n{}", "a".repeat(100), format!("{}\n", "b".repeat(99)).repeat(20));
        let c = chunk(&text);
        check_cover(&text, &c);
        assert!(c.chunks[0].chars > 700);
    }

    #[test]
    fn a_line_longer_than_the_target_is_its_own_chunk() {
        let text = format!("short\n{}\nshort again\n", "L".repeat(5000));
        let c = chunk(&text);
        check_cover(&text, &c);
        let t = texts(&text, &c);
        assert_eq!(t, ["short", &"L".repeat(5000), "short again"]);
        // One 60 KB line alone.
        let line = "x".repeat(60_000);
        let c = chunk(&line);
        check_cover(&line, &c);
        assert_eq!(c.chunks.len(), 1);
    }

    #[test]
    fn emoji_and_cjk_at_chunk_boundaries_stay_whole() {
        let line = format!("{}😀日本\n", "é".repeat(47));
        let text = line.repeat(300);
        let c = chunk(&text);
        check_cover(&text, &c);
        for t in texts(&text, &c) {
            assert!(t.starts_with('é') && t.ends_with("😀日本"));
        }
        // A long single line of emoji.
        let text = "😀".repeat(10_000);
        let c = chunk(&text);
        check_cover(&text, &c);
    }

    #[test]
    fn segments_respect_both_limits_and_isolate_oversize_chunks() {
        let mk = |chars: usize| Chunk { start: 0, end: 0, first_line: 0, lines: 1, chars, files: vec![] };
        let chunks: Vec<Chunk> = [10, 10, 10, 50, 10, 10, 10, 10].iter().map(|&c| mk(c)).collect();
        let segs = segments(&chunks, 30, 2);
        let shape: Vec<(usize, usize, bool)> = segs.iter().map(|s| (s.first, s.count, s.oversize)).collect();
        assert_eq!(shape, [(0, 2, false), (2, 1, false), (3, 1, true), (4, 2, false), (6, 2, false)]);
        let segs = segments(&chunks, 30, 40);
        let shape: Vec<(usize, usize, bool)> = segs.iter().map(|s| (s.first, s.count, s.oversize)).collect();
        assert_eq!(shape, [(0, 3, false), (3, 1, true), (4, 3, false), (7, 1, false)]);
        assert!(segments(&[], 30, 40).is_empty());
    }

    #[test]
    fn empty_and_odd_texts() {
        assert!(chunk("").chunks.is_empty());
        for text in ["\n", "\n\n\n", "--\n--\n--", "a", "::1::\n:1:\n-1-\n"] {
            let c = chunk(text);
            check_cover(text, &c);
        }
    }
}
