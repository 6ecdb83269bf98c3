//! grep-style output (docs/GUARD.md, "What it judges"): telling it apart from
//! plain output, the file of each line, and its chunks grouped by file.
//!
//! Cost: a megabyte of `grep -C` output over thousands of files must chunk in
//! a few milliseconds (a run-end pass has 15 ms for 1 MB), so every step here
//! is linear in the text: the longest known file name that starts a context
//! line is found with a rolling hash of the line's prefixes and a hash set of
//! the names, never by scanning the names.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::text::{any_byte_below, any_byte_is, find_byte, fnv_step, same_bytes, word, FNV_OFFSET};

use super::{make_chunk, windows, Chunk, Line};

/// A path longer than this is not taken for a file name: no file system has
/// longer paths, and it bounds the work per context line.
pub const MAX_PATH: usize = 1024;

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| fnv_step(h, b))
}

/// A fast hasher for the per-line maps (std's SipHash guards against
/// hash flooding, which costs more than this whole pass per line; the keys
/// here come from one tool output and a collision only slows a lookup).
#[derive(Default, Clone, Copy)]
pub struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        // Spread the low bits hashbrown uses for buckets.
        self.0 ^ (self.0 >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        // FxHash's mixing, eight bytes at a time (paths are tens of bytes).
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h = self.0;
        // An index loop: at `opt-level = "z"` an iterator's `next` stays a call per step.
        let mut i = 0;
        while let Some(w) = bytes.get(i..i + 8) {
            h = (h.rotate_left(5) ^ crate::text::word(w)).wrapping_mul(K);
            i += 8;
        }
        for &b in bytes.get(i..).unwrap_or(&[]) {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
        self.0 = h;
    }
    fn write_u64(&mut self, n: u64) {
        // Keys that are already FNV hashes.
        self.0 = n;
    }
}

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;
pub(crate) type FastSet<K> = HashSet<K, BuildHasherDefault<Fnv>>;

/// The file names seen in `path:line:` lines, numbered in order of appearance.
struct Names<'a> {
    ids: FastMap<&'a str, u32>,
    names: Vec<&'a str>,
    /// Match lines per name.
    counts: Vec<u32>,
    /// FNV hashes of the names, for lines with many `-digits-` places;
    /// made when the first such line comes (most outputs have none).
    hashes: Option<FastSet<u64>>,
    max_len: usize,
    /// `lengths[n]`: some name is `n` bytes long. A place where no name ends
    /// needs no lookup (most places: dates and versions inside file names).
    lengths: Vec<bool>,
    /// The same lengths in ascending order: when there are few, a line is
    /// checked at those places instead of searched for dashes.
    distinct: Vec<usize>,
}

impl<'a> Names<'a> {
    fn new() -> Self {
        Names {
            ids: FastMap::default(),
            names: Vec::new(),
            counts: Vec::new(),
            hashes: None,
            max_len: 0,
            lengths: Vec::new(),
            distinct: Vec::new(),
        }
    }

    /// Counts a match line of `name` and returns the name's id.
    fn add(&mut self, name: &'a str) -> u32 {
        let next = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        let id = *self.ids.entry(name).or_insert(next);
        if id == next {
            self.names.push(name);
            self.counts.push(0);
            self.max_len = self.max_len.max(name.len());
            if self.lengths.len() <= name.len() {
                self.lengths.resize(name.len() + 1, false);
            }
            if let Some(l) = self.lengths.get_mut(name.len()).filter(|l| !**l) {
                *l = true;
                let at = self.distinct.partition_point(|&n| n < name.len());
                self.distinct.insert(at, name.len());
            }
        }
        self.count_again(id);
        id
    }

    /// Counts another match line of a known name.
    fn count_again(&mut self, id: u32) {
        if let Some(c) = self.counts.get_mut(id as usize) {
            *c = c.saturating_add(1);
        }
    }

    fn name(&self, id: u32) -> &'a str {
        self.names.get(id as usize).copied().unwrap_or("")
    }

    fn count(&self, id: u32) -> u32 {
        self.counts.get(id as usize).copied().unwrap_or(0)
    }

    /// The places (byte offsets) in the first `max_len + 1` bytes of `line`
    /// where `-digits-` starts: where a known name could end.
    fn dash_places(&self, line: &str, found: &mut Vec<usize>) {
        let bytes = line.as_bytes();
        let head = bytes.get(..bytes.len().min(self.max_len.saturating_add(1))).unwrap_or(bytes);
        found.clear();
        if self.distinct.len().saturating_mul(4) < head.len() {
            // Few name lengths (the usual case): look only where a name could end.
            let mut k = 0;
            while let Some(&p) = self.distinct.get(k) {
                k += 1;
                if matches!(head.get(p), Some(b'-')) && dash_digits_dash(bytes, p) {
                    found.push(p);
                }
            }
            return;
        }
        let mut from = 1;
        while let Some(off) = head.get(from..).and_then(|h| find_byte(h, b'-')) {
            let p = from + off;
            if self.lengths.get(p).copied().unwrap_or(false) && dash_digits_dash(bytes, p) {
                found.push(p);
            }
            from = p + 1;
        }
    }

    /// The id of the longest known name that starts `line` and ends at one of
    /// `places` (a context line of `rg -C`), so `2024-05-01-post.md-12-` finds
    /// `2024-05-01-post.md`, not `2024`. A few places (the usual case) are
    /// looked up directly, longest first; many (a line built to be slow) go
    /// through one rolling hash of the prefixes, so the work stays linear in
    /// the line whatever the number of names.
    fn context_file(&mut self, line: &str, places: &[usize]) -> Option<u32> {
        let mut hits = Vec::new();
        let places = if places.len() > DIRECT_LOOKUPS {
            let names = &self.names;
            let hashes = self.hashes.get_or_insert_with(|| names.iter().map(|n| fnv(n.as_bytes())).collect());
            let mut h = FNV_OFFSET;
            let mut k = 0;
            for (p, &b) in line.as_bytes().iter().enumerate() {
                if k >= places.len() {
                    break;
                }
                // `h` is the hash of bytes[..p] here.
                if matches!(places.get(k), Some(&q) if q == p) {
                    k += 1;
                    if hashes.contains(&h) {
                        hits.push(p);
                    }
                }
                h = fnv_step(h, b);
            }
            &hits[..]
        } else {
            places
        };
        // Longest first; the map decides (the rolling hash only proposes).
        let mut k = places.len();
        while let Some(&p) = k.checked_sub(1).and_then(|i| places.get(i)) {
            k -= 1;
            if let Some(&id) = line.get(..p).and_then(|name| self.ids.get(name)) {
                return Some(id);
            }
        }
        None
    }
}

/// The number of ASCII digits starting at `at`.
#[inline(always)]
fn digits_at(bytes: &[u8], at: usize) -> usize {
    let mut n = 0;
    while matches!(bytes.get(at + n), Some(b'0'..=b'9')) {
        n += 1;
    }
    n
}

/// Up to this many `-digits-` places in a line are looked up one by one.
const DIRECT_LOOKUPS: usize = 8;

/// `bytes[at..]` starts with `-`, one or more digits, `-`.
#[inline(always)]
fn dash_digits_dash(bytes: &[u8], at: usize) -> bool {
    let digits = digits_at(bytes, at + 1);
    digits > 0 && matches!(bytes.get(at + 1 + digits), Some(b'-'))
}

/// A plausible path: not empty, not too long, no spaces or control
/// characters, not only digits (so a timestamp's `12:30:45` is no path).
fn plausible_path(p: &[u8]) -> bool {
    if p.is_empty() || p.len() > MAX_PATH {
        return false;
    }
    // Eight bytes at a time (it runs on every match line).
    let mut i = 0;
    while let Some(w) = p.get(i..i + 8) {
        let x = word(w);
        if any_byte_below(x, b' ' + 1) || any_byte_is(x, 0x7f) {
            return false;
        }
        i += 8;
    }
    p.get(i..).unwrap_or(&[]).iter().all(|&b| b > b' ' && b != 0x7f) && !p.iter().all(u8::is_ascii_digit)
}

/// `p` ends with an ISO 8601 date and hour, `2024-05-01T12` (`T` or `t`).
/// Followed by `:00:`, that is a log line's timestamp (`2024-05-01T12:00:03Z
/// INFO …`), not a file `2024-05-01T12` at line 00; the form with a space
/// (`2024-05-01 12:00:03,123`) is no path already, for its space.
fn ends_with_iso_hour(p: &[u8]) -> bool {
    let Some(tail) = p.len().checked_sub(13).and_then(|from| p.get(from..)) else {
        return false;
    };
    let digit = |i: usize| tail.get(i).is_some_and(u8::is_ascii_digit);
    [0, 1, 2, 3, 5, 6, 8, 9, 11, 12].into_iter().all(digit)
        && tail[4] == b'-'
        && tail[7] == b'-'
        && matches!(tail[10], b'T' | b't')
}

/// Byte length of the path of a `path:line:` line: the text before the first
/// `:digits:`, if that is a plausible path and not a timestamp's date and
/// hour followed by its minutes.
fn match_prefix(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut from = 0;
    // `find` on a char uses memchr: most lines of plain output have no colon.
    while let Some(off) = find_byte(bytes.get(from..)?, b':') {
        let colon = from + off;
        if colon > MAX_PATH {
            return None;
        }
        let digits = digits_at(bytes, colon + 1);
        if digits > 0 && matches!(bytes.get(colon + 1 + digits), Some(b':')) {
            let path = bytes.get(..colon)?;
            let timestamp = digits == 2 && ends_with_iso_hour(path);
            return (plausible_path(path) && !timestamp).then_some(colon);
        }
        from = colon + 1;
    }
    None
}

/// The file of each line (an id into the returned names) if the output is
/// grep-style, else `None`.
///
/// grep-style: at least 3 non-empty lines (ignoring `--`) and at least
/// 60% of them are `path:line:` matches or `path-line-` context lines. A
/// context line belongs to the longest file name seen in any match line of
/// the output: all of them, not only earlier ones, because `rg -C` prints the
/// context before a file's first match ahead of that match.
pub(super) fn grep_files<'a>(text: &'a str, lines: &[Line]) -> Option<(Vec<Option<u32>>, Vec<&'a str>)> {
    let line_str = |l: &Line| text.get(l.start..l.end).unwrap_or("");
    let mut names = Names::new();
    // Consecutive match lines are usually of one file: compare with the last
    // one before hashing.
    let mut last: Option<(u32, &str)> = None;
    // Index loops here and below: at `opt-level = "z"` an iterator adapter's
    // `next` stays a call per line.
    let mut matches: Vec<Option<u32>> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while let Some(l) = lines.get(i) {
        i += 1;
        let s = line_str(l);
        let name = if l.blank || l.separator { None } else { match_prefix(s).and_then(|len| s.get(..len)) };
        let Some(name) = name else {
            matches.push(None);
            continue;
        };
        let id = match last {
            Some((id, previous)) if same_bytes(previous.as_bytes(), name.as_bytes()) => {
                names.count_again(id);
                id
            }
            _ => names.add(name),
        };
        last = Some((id, name));
        matches.push(Some(id));
    }
    if names.names.is_empty() {
        return None;
    }
    let mut files = Vec::with_capacity(lines.len());
    let (mut nonempty, mut greppy) = (0usize, 0usize);
    let mut places = Vec::new();
    let mut previous: Option<u32> = None;
    let mut i = 0;
    while let (Some(l), Some(m)) = (lines.get(i), matches.get(i)) {
        i += 1;
        if l.blank || l.separator {
            files.push(None);
            continue;
        }
        let s = line_str(l);
        nonempty += 1;
        names.dash_places(s, &mut places);
        // A context line is tried first: its content may hold `:12:` (an ISO
        // timestamp in a log), which must not make it a match line. The
        // "path" such a line yields holds its line number, so it is unique; a
        // path seen in two match lines is a real file, and a longer one wins
        // (files `v2024` and `v2024-05-01-post.md`).
        let longest_place = places.last().copied();
        let file = match *m {
            // No place reaches past the match's path: the match decides, with
            // no lookup (most match lines).
            Some(id) if names.count(id) >= 2 && longest_place.is_none_or(|p| p < names.name(id).len()) => Some(id),
            _ => {
                // The previous line's file, if this line continues it: no lookup.
                let same = previous.filter(|&id| {
                    let name = names.name(id);
                    matches!(longest_place, Some(p) if p == name.len())
                        && s.as_bytes().get(..name.len()).is_some_and(|head| same_bytes(head, name.as_bytes()))
                });
                let context = same.or_else(|| names.context_file(s, &places));
                match (context, *m) {
                    (Some(c), Some(id)) if names.name(id).len() > names.name(c).len() && names.count(id) >= 2 => {
                        Some(id)
                    }
                    (Some(c), _) => Some(c),
                    (None, m) => m,
                }
            }
        };
        if file.is_some() {
            greppy += 1;
            previous = file;
        }
        files.push(file);
    }
    (nonempty >= 3 && greppy.saturating_mul(10) >= nonempty.saturating_mul(6)).then_some((files, names.names))
}

/// A run of lines of one file (or of none, before the first file).
struct Group {
    first: usize,
    end: usize,
    file: Option<u32>,
    chars: usize,
}

pub(super) fn grep_chunks(lines: &[Line], files: &[Option<u32>], names: &[&str], target: usize) -> Vec<Chunk> {
    let mut groups: Vec<Group> = Vec::new();
    let mut i = 0;
    while let (Some(line), Some(&id)) = (lines.get(i), files.get(i)) {
        i += 1;
        match groups.last_mut() {
            // Separators, blanks and unmatched lines stay with the current group.
            // Compared by hand: `Option`'s `==` stays a call per line at `opt-level = "z"`.
            Some(g) if id.is_none() || matches!((g.file, id), (Some(a), Some(b)) if a == b) => {
                g.end = i;
                g.chars += line.chars;
            }
            // Lines before the first file join it.
            Some(g) if g.file.is_none() => {
                g.file = id;
                g.end = i;
                g.chars += line.chars;
            }
            _ => groups.push(Group { first: i - 1, end: i, file: id, chars: line.chars }),
        }
    }
    let name_of = |id: Option<u32>| id.and_then(|i| names.get(i as usize)).map(|n| n.to_string());

    let mut out = Vec::new();
    let small = target / 4;
    let merged_max = target / 2;
    // Small groups waiting to be merged: (first line, end line, chars, files).
    let mut pending: Option<(usize, usize, usize, Vec<String>)> = None;
    for g in &groups {
        if g.chars < small {
            match &mut pending {
                Some((_, end, chars, files)) if chars.saturating_add(g.chars) <= merged_max => {
                    *end = g.end;
                    *chars += g.chars;
                    files.extend(name_of(g.file));
                }
                _ => {
                    if let Some(p) = pending.take() {
                        out.push(make_chunk(lines, p.0, p.1, p.3));
                    }
                    pending = Some((g.first, g.end, g.chars, name_of(g.file).into_iter().collect()));
                }
            }
            continue;
        }
        if let Some(p) = pending.take() {
            out.push(make_chunk(lines, p.0, p.1, p.3));
        }
        let files: Vec<String> = name_of(g.file).into_iter().collect();
        if g.chars.saturating_mul(2) > target.saturating_mul(3) {
            // Windows of one large group each still name its file.
            out.extend(windows(lines, g.first, g.end, target, &files));
        } else {
            out.push(make_chunk(lines, g.first, g.end, files));
        }
    }
    if let Some(p) = pending.take() {
        out.push(make_chunk(lines, p.0, p.1, p.3));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::tests::check_cover;
    use crate::chunk::{chunk, split_lines};

    #[test]
    fn plausible_paths_across_the_eight_byte_steps() {
        for len in 1..20 {
            let path = "a".repeat(len);
            assert!(plausible_path(path.as_bytes()));
            assert!(!plausible_path("7".repeat(len).as_bytes()), "digits only");
            for at in 0..len {
                for bad in [b' ', b'\t', 0u8, 0x1f, 0x7f] {
                    let mut p = path.clone().into_bytes();
                    p[at] = bad;
                    assert!(!plausible_path(&p), "{p:?}");
                }
                let mut p = path.clone().into_bytes();
                p[at] = 0xc3;
                assert!(plausible_path(&p), "non-ASCII bytes are path bytes");
            }
        }
        assert!(!plausible_path(b""));
        assert!(!plausible_path(&[b'a'; MAX_PATH + 1]));
    }

    #[test]
    fn detects_grep_output() {
        let grep = "src/a.ts:1:x\nsrc/a.ts-2-y\n--\nsrc/b.ts:9:z\n";
        assert!(chunk(grep).grep);
        // Fewer than 3 non-empty lines.
        assert!(!chunk("a.ts:1:x\nb.ts:2:y\n").grep);
        // Under 60%.
        assert!(!chunk("a.ts:1:x\nplain\nplain\nplain\nb.ts:2:y\n").grep);
        // Exactly 60%.
        assert!(chunk("a.ts:1:x\nplain\nplain\nb.ts:2:y\nc.ts:3:z\n").grep);
        // `--` lines do not count.
        assert!(chunk("a.ts:1:x\n--\n--\n--\nb.ts:2:y\nc.ts:3:z\n").grep);
        // Timestamps are no paths.
        assert!(!chunk("12:30:45 start\n12:30:46 run\n12:30:47 stop\n").grep);
        // Plain text with dates is not grep output.
        assert!(!chunk("2024-05-01 released\n2024-05-02 fixed\n2024-06-01 done\n").grep);
        // A heading-style rg output (no paths) is not either.
        assert!(!chunk("src/a.ts\n1:x\n2:y\n3:z\n").grep);
    }

    #[test]
    fn iso_timestamps_are_no_file_names() {
        // A log whose lines start with ISO timestamps, with `T` and with a space.
        let t_log = "2024-05-01T12:00:03Z INFO start\n2024-05-01T12:00:04Z INFO run\n\
                     2024-05-01T12:34:05.120+02:00 WARN slow\n2024-05-01t12:00:06Z INFO stop\n";
        let space_log = "2024-05-01 12:00:03,123 INFO start\n2024-05-01 12:00:04,456 INFO run\n\
                         2024-05-01 12:00:05,789 INFO stop\n";
        for log in [t_log, space_log] {
            for line in log.lines() {
                assert_eq!(match_prefix(line), None, "{line}");
            }
            let c = chunk(log);
            assert!(!c.grep, "{log}");
            assert_eq!(c.chunks, windows(&split_lines(log), 0, log.lines().count(), c.target, &[]));
            assert!(c.chunks.iter().all(|k| k.files.is_empty()));
        }
        // A log line that names a file later on is still no match line.
        assert_eq!(match_prefix("2024-05-01T12:00:03Z ERROR src/a.rs:12: boom"), None);
        assert!(ends_with_iso_hour(b"2024-05-01T12"));
        assert!(ends_with_iso_hour(b"[2024-05-01T12"));
        assert!(!ends_with_iso_hour(b"2024-05-01-12"));
        assert!(!ends_with_iso_hour(b"024-05-01T12"));
    }

    #[test]
    fn grep_output_of_dated_files_stays_grep_output() {
        // Real grep output: dated file names, a match in a log file at a
        // timestamp, context lines, and a file named like a date and hour
        // whose line number is not two digits.
        let text = "2024-05-01-post.md:3:title\n2024-05-01-post.md-4-body\nsrc/a.rs-12-before\n\
                    src/a.rs:13:2024-05-01T12:00:03Z match\nsrc/a.rs:14:x\nlogs/app.log:7:2024-05-01T12:00:03Z INFO x\n\
                    2024-05-01T12:7:odd\n2024-05-01T12:123:odd\n";
        assert_eq!(match_prefix("2024-05-01-post.md:3:title"), Some(18));
        assert_eq!(match_prefix("src/a.rs:13:2024-05-01T12:00:03Z match"), Some(8));
        assert_eq!(match_prefix("logs/app.log:7:2024-05-01T12:00:03Z INFO x"), Some(12));
        assert_eq!(match_prefix("2024-05-01T12:7:odd"), Some(13));
        assert_eq!(match_prefix("2024-05-01T12:123:odd"), Some(13));
        assert_eq!(match_prefix("src/a.rs-12-before"), None);
        let post = Some("2024-05-01-post.md");
        let a = Some("src/a.rs");
        let dated = Some("2024-05-01T12");
        assert_eq!(file_names(text), [post, post, a, a, a, Some("logs/app.log"), dated, dated]);
        let c = chunk(text);
        assert!(c.grep);
        assert_eq!(c.chunks.len(), 1);
        assert_eq!(c.chunks[0].files, ["2024-05-01-post.md", "src/a.rs", "logs/app.log", "2024-05-01T12"]);
    }

    fn file_names(text: &str) -> Vec<Option<&str>> {
        let lines = split_lines(text);
        let (ids, names) = grep_files(text, &lines).unwrap();
        ids.iter().map(|i| i.map(|i| names[i as usize])).collect()
    }

    #[test]
    fn context_lines_take_the_longest_known_file_name() {
        // `v2024` is a file too, and `v2024-05-01-post.md-12-` starts with `v2024-05-`.
        let text = "v2024-05-01-post.md-11-before\nv2024-05-01-post.md:12:match\nv2024-05-01-post.md:13:match\n\
                    v2024-05-01-post.md-14-after\nv2024:1:x\nv2024-2-y\n";
        let files = file_names(text);
        let post = Some("v2024-05-01-post.md");
        assert_eq!(files, [post, post, post, post, Some("v2024"), Some("v2024")]);
    }

    #[test]
    fn lines_with_many_dash_digit_places_still_find_the_longest_name() {
        let long = "a-1-b-2-c-3-d-4-e-5-f-6-g-7-h-8-i-9-j";
        let text = format!("{long}:1:x\n{long}:2:y\n{long}-3-z\na:1:q\na-2-w\n");
        let files = file_names(&text);
        assert_eq!(files, [Some(long), Some(long), Some(long), Some("a"), Some("a")]);
    }

    #[test]
    fn few_or_many_name_lengths_find_the_same_longest_name() {
        // Names that hold `-digits-` places of shorter names: with a few
        // lengths a line is checked where names end; with many, searched
        // for dashes. Both find the longest name.
        for count in [2, 5, 40] {
            let names: Vec<String> = (1..=count).map(|n| format!("{}-1-{n}.md", "p".repeat(n))).collect();
            let mut text = String::new();
            for name in &names {
                let short = &name[..name.find('-').unwrap()];
                text.push_str(&format!(
                    "{short}:1:x\n{name}-4-before\n{name}:5:match\n{name}:6:match\n{name}-7-after\n"
                ));
            }
            let files = file_names(&text);
            for (i, name) in names.iter().enumerate() {
                let short = &name[..name.find('-').unwrap()];
                let name = Some(name.as_str());
                assert_eq!(files[i * 5..i * 5 + 5], [Some(short), name, name, name, name], "{count} names");
            }
        }
    }

    #[test]
    fn a_log_timestamp_in_a_context_line_does_not_make_a_match() {
        let text = "app.log:5:2024-01-01 12:30:45 ERROR x\napp.log-6-2024-01-01 12:30:46 INFO y\napp.log-7-z\n";
        let files = file_names(text);
        assert_eq!(files, [Some("app.log"), Some("app.log"), Some("app.log")]);
    }

    /// `rg -n -C2` style output: `files` files of `per` matches each.
    fn grep_output(files: usize, per: usize, width: usize) -> String {
        let mut s = String::new();
        for f in 0..files {
            for m in 0..per {
                let n = m * 10 + 5;
                let pad = "w".repeat(width);
                s.push_str(&format!("src/dir{}/file-{f}.ts-{}-before {pad}\n", f % 7, n - 1));
                s.push_str(&format!("src/dir{}/file-{f}.ts:{n}:match {pad}\n", f % 7));
                s.push_str(&format!("src/dir{}/file-{f}.ts-{}-after {pad}\n", f % 7, n + 1));
                s.push_str("--\n");
            }
        }
        s
    }

    #[test]
    fn grep_groups_by_file_merges_small_groups_and_splits_large_ones() {
        // 40 small files then one big one.
        let mut text = grep_output(40, 1, 10);
        let big: String = (0..400).map(|i| format!("big/file.rs:{}:{}\n", i + 1, "z".repeat(40))).collect();
        text.push_str(&big);
        let c = chunk(&text);
        assert!(c.grep);
        check_cover(&text, &c);
        let t = c.target;
        // Small groups merge up to half the target and name all their files.
        let merged = &c.chunks[0];
        assert!(merged.files.len() > 1, "{:?}", merged.files);
        assert!(merged.chars <= t / 2);
        // The big group is split into windows that each name the file.
        let big_chunks: Vec<&Chunk> = c.chunks.iter().filter(|k| k.files == ["big/file.rs"]).collect();
        assert!(big_chunks.len() > 1);
        for k in &big_chunks {
            assert!(k.chars <= t, "{} > {t}", k.chars);
        }
        // A mid-sized group is one chunk.
        let text = grep_output(3, 6, 20);
        let c = chunk(&text);
        check_cover(&text, &c);
        assert_eq!(c.chunks.len(), 3);
        assert_eq!(c.chunks[1].files, ["src/dir1/file-1.ts"]);
    }
}
