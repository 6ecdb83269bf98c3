//! The text that replaces a distilled output (a header, kept lines verbatim),
//! and the tool labels the notes and records name.
//!
//! For: the `[context-guard]` header, kept chunks verbatim in order, one
//! omission line per run of removed chunks, the one-line note of a removed
//! output. Not for: deciding what is kept (`decide`) or the draft around the
//! text (`pass`).
//!
//! Every note starts with [`MARK`]: that is how the guard recognises its own
//! edits later (candidates, savings), so the marker never changes.

use serde_json::Value;

use crate::chunk::{chunk_text, Chunk, FastMap};
use crate::decimal::whole;
use crate::text::{push_usize, sanitize_line, short_count};

/// The start of every text the guard writes into the context.
pub const MARK: &str = "[context-guard]";
/// A label's detail (command, path, pattern) is clipped to this many
/// characters (the original guard sent labels of up to 80 characters).
pub const LABEL_DETAIL_MAX: usize = 80;
/// An omission line names this many files, then "and N more" (as the original).
pub const OMISSION_FILES: usize = 5;
/// A file name in an omission line is clipped to this many characters.
const FILE_NAME_MAX: usize = 120;

/// `s` as one short line safe for a note or a terminal: newlines and controls
/// become spaces, whitespace collapses, clipped with `…`.
pub fn one_line(s: &str, max: usize) -> String {
    if is_one_line(s, max) {
        return s.to_string();
    }
    let flat: String = s.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
    sanitize_line(&flat, max)
}

/// Whether `s` is already what [`one_line`] makes of it (the usual file name
/// or command, cheaply: omission lines name thousands of files): printable
/// ASCII, no space at either end or next to another, at most `max` long.
fn is_one_line(s: &str, max: usize) -> bool {
    let b = s.as_bytes();
    b.len() <= max
        && b.first() != Some(&b' ')
        && b.last() != Some(&b' ')
        && b.iter().all(|c| (b' '..=b'~').contains(c))
        && !b.windows(2).any(|w| w == b"  ")
}

/// [`tool_label`] with the arguments as JSON text; text that is not JSON
/// counts as no arguments. (Read here, not in the wasm crate: serde_json's
/// reader instantiated there is a second copy in the `.wasm`.)
pub fn tool_label_json(tool: &str, args: &str) -> String {
    tool_label(tool, &serde_json::from_str(args).unwrap_or(Value::Null))
}

/// How a call is named in notes and records: the tool, then its main argument
/// in backticks (bash `command`, read `path`, grep `pattern`, …).
pub fn tool_label(tool: &str, args: &Value) -> String {
    let tool_name = one_line(tool, 40);
    let arg = |k: &str| args.get(k).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
    let ticked = |s: &str| format!("`{}`", one_line(&s.replace('`', "'"), LABEL_DETAIL_MAX));
    let detail = match tool {
        "bash" => arg("command").map(ticked),
        "read" => arg("path").map(|p| match args.get("offset").and_then(Value::as_f64) {
            // `whole`, not `{}`: `Display` for floats is kilobytes of the `.wasm`.
            Some(o) if o > 1.0 && o.is_finite() => format!("{} from line {}", ticked(p), whole(o.floor())),
            _ => ticked(p),
        }),
        "grep" | "find" => arg("pattern").map(|p| match arg("path") {
            Some(path) => format!("{} in {}", ticked(p), ticked(path)),
            None => ticked(p),
        }),
        _ => ["command", "path", "file_path", "pattern", "query", "url", "name"].into_iter().find_map(arg).map(ticked),
    };
    match detail {
        Some(d) if tool_name.is_empty() => d,
        Some(d) => format!("{tool_name} {d}"),
        None if tool_name.is_empty() => "a tool".to_string(),
        None => tool_name,
    }
}

/// `recall({"entryId":"…"})` for an entry, the id JSON-escaped.
pub fn recall_call(entry_id: &str) -> String {
    let id = serde_json::to_string(entry_id).unwrap_or_else(|_| "\"\"".to_string());
    format!("recall({{\"entryId\":{id}}})")
}

/// How omission lines locate what they stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Numbering {
    /// grep-style output: name the files.
    Grep,
    /// `read` output: file line numbers, the output's first line being `offset`.
    File { offset: usize },
    /// Anything else: output line numbers.
    #[default]
    Output,
}

impl Numbering {
    /// The numbering for an output of `tool` called with `args`.
    pub fn for_output(tool: &str, args: &Value, grep: bool) -> Numbering {
        match (grep, file_offset(tool, args)) {
            (true, _) => Numbering::Grep,
            (false, Some(offset)) => Numbering::File { offset },
            (false, None) => Numbering::Output,
        }
    }
}

/// For `read` output, the file line of the output's first line (the call's
/// `offset`, 1 when absent).
pub fn file_offset(tool: &str, args: &Value) -> Option<usize> {
    if tool != "read" {
        return None;
    }
    let offset = args.get("offset").and_then(Value::as_f64).filter(|o| o.is_finite() && *o >= 1.0);
    // Whole and at least 1, so the conversion is exact up to the cap.
    Some(offset.map_or(1, |o| o.floor().min(1e15) as usize))
}

/// One output to render with its keep set.
#[derive(Debug, Clone, Copy)]
pub struct Distill<'a> {
    pub text: &'a str,
    pub chunks: &'a [Chunk],
    /// One flag per chunk.
    pub keep: &'a [bool],
    pub label: &'a str,
    pub entry_id: &'a str,
    pub numbering: Numbering,
    /// The output's lines and characters (for the header).
    pub lines: usize,
    pub chars: usize,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    let mut s = String::with_capacity(16);
    push_plural(&mut s, n, one, many);
    s
}

fn push_plural(out: &mut String, n: usize, one: &str, many: &str) {
    push_usize(out, n);
    out.push(' ');
    out.push_str(if n == 1 { one } else { many });
}

/// The replacement text: the distilled output, or the one-line note when
/// nothing is kept. `None` if a chunk does not fit the text (an altered
/// plan), so the caller keeps the output.
pub fn replacement(d: &Distill) -> Option<String> {
    render(d).map(|r| r.text)
}

/// A replacement text and where in it the kept chunks were copied verbatim.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rendered {
    pub text: String,
    /// In order: the byte range in `text` of each kept chunk's text, and the chunk.
    pub verbatim: Vec<Verbatim>,
}

/// One kept chunk's text inside a replacement (see [`Rendered`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verbatim {
    pub start: usize,
    pub end: usize,
    /// Index of the chunk in the output.
    pub chunk: usize,
}

/// [`replacement`], with where the kept chunks are in it: the boundary sends
/// those as ranges of the text the extension already has (`pass::finish_json`).
pub fn render(d: &Distill) -> Option<Rendered> {
    let kept = |i: usize| d.keep.get(i).copied().unwrap_or(true);
    let kept_lines: usize = d.chunks.iter().enumerate().filter(|(i, _)| kept(*i)).map(|(_, c)| c.lines).sum();
    let kept_chars: usize = d.chunks.iter().enumerate().filter(|(i, _)| kept(*i)).map(|(_, c)| c.chars).sum();
    let recall = recall_call(d.entry_id);
    if kept_lines == 0 && kept_chars == 0 {
        let text = format!(
            "{MARK} Removed the output of {}: {} ({} chars) judged not needed for the answer. Full output: {recall}.",
            d.label,
            plural(d.lines, "line", "lines"),
            short_count(d.chars),
        );
        return Some(Rendered { text, verbatim: Vec::new() });
    }
    let mut out = format!(
        "{MARK} Distilled the output of {}: kept {kept_lines} of {} ({} of {} chars); the rest was judged not needed for \
         the answer. Full output: {recall}.",
        d.label,
        plural(d.lines, "line", "lines"),
        short_count(kept_chars),
        short_count(d.chars),
    );
    let mut verbatim = Vec::new();
    let mut removed: Vec<&Chunk> = Vec::new();
    for (i, c) in d.chunks.iter().enumerate() {
        if kept(i) {
            if !removed.is_empty() {
                out.push('\n');
                out.push_str(&omission(&removed, d.numbering));
                removed.clear();
            }
            out.push('\n');
            let start = out.len();
            out.push_str(chunk_text(d.text, c)?);
            verbatim.push(Verbatim { start, end: out.len(), chunk: i });
        } else {
            removed.push(c);
        }
    }
    if !removed.is_empty() {
        out.push('\n');
        out.push_str(&omission(&removed, d.numbering));
    }
    Some(Rendered { text: out, verbatim })
}

/// The line that stands for a run of removed chunks.
pub fn omission(run: &[&Chunk], numbering: Numbering) -> String {
    let lines: usize = run.iter().map(|c| c.lines).sum();
    let first = run.first().map_or(0, |c| c.first_line);
    let last = first.saturating_add(lines.saturating_sub(1));
    // Written piece by piece, not with format!: a grep output's omissions are thousands.
    let span = |what: &str, base: usize| {
        let (a, b) = (first.saturating_add(base), last.saturating_add(base));
        let mut s = String::with_capacity(48);
        s.push_str("[… ");
        s.push_str(what);
        s.push_str(if a == b { " line " } else { " lines " });
        push_usize(&mut s, a);
        if a != b {
            s.push('-');
            push_usize(&mut s, b);
        }
        s.push_str(" omitted]");
        s
    };
    match numbering {
        Numbering::Grep => {
            // Distinct files in order; a set once there are more than a few, since a run
            // can span thousands (most runs name a few: a set for each costs more than looking).
            // A map like the one `chunk` keeps of file names: one hash table type in the wasm.
            const FEW: usize = 16;
            let mut seen: FastMap<&str, u32> = FastMap::default();
            let mut files: Vec<&str> = Vec::new();
            for f in run.iter().flat_map(|c| c.files.iter()) {
                let new = if files.len() < FEW {
                    !files.contains(&f.as_str())
                } else {
                    if seen.is_empty() {
                        for &f in &files {
                            seen.insert(f, 0);
                        }
                    }
                    seen.insert(f.as_str(), 0).is_none()
                };
                if new {
                    files.push(f);
                }
            }
            let mut s = String::with_capacity(64);
            s.push_str("[… ");
            push_plural(&mut s, lines, "line", "lines");
            if files.is_empty() {
                s.push_str(" omitted]");
                return s;
            }
            s.push_str(" omitted from ");
            for (i, f) in files.iter().take(OMISSION_FILES).enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                s.push_str(&one_line(f, FILE_NAME_MAX));
            }
            let more = files.len().saturating_sub(OMISSION_FILES);
            if more > 0 {
                s.push_str(" and ");
                push_usize(&mut s, more);
                s.push_str(" more");
            }
            s.push(']');
            s
        }
        Numbering::File { offset } => span("file", offset),
        Numbering::Output => span("output", 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::chunk;
    use serde_json::json;

    #[test]
    fn one_line_takes_a_line_that_needs_nothing_as_it_is() {
        let slow = |s: &str, max: usize| sanitize_line(&s.replace(['\n', '\r'], " "), max);
        let cases = [
            "",
            "a",
            "src/a.ts",
            "a b",
            "a  b",
            " a",
            "a ",
            "a\tb",
            "a\nb",
            "x\u{7f}y",
            "日本",
            "~!@#$%^&*()",
            "packages/pkg-1/src/services/module-22.ts",
            "a\u{200b}b",
        ];
        for s in cases {
            for max in [0, 1, 3, 8, 40, 120] {
                assert_eq!(one_line(s, max), slow(s, max), "{s:?} {max}");
            }
        }
        assert!(is_one_line("src/a.ts", 8) && !is_one_line("src/a.ts", 7) && !is_one_line("a  b", 9));
    }

    #[test]
    fn labels_name_the_main_argument_on_one_line() {
        assert_eq!(tool_label("bash", &json!({"command": "rg -n -i status"})), "bash `rg -n -i status`");
        assert_eq!(tool_label("bash", &json!({"command": "a\nb\x1b[31m `x`"})), "bash `a b [31m 'x'`");
        assert_eq!(tool_label("read", &json!({"path": "src/a.ts"})), "read `src/a.ts`");
        assert_eq!(tool_label("read", &json!({"path": "src/a.ts", "offset": 501})), "read `src/a.ts` from line 501");
        assert_eq!(tool_label("grep", &json!({"pattern": "foo", "path": "src"})), "grep `foo` in `src`");
        assert_eq!(tool_label("mcp_x", &json!({"query": "q"})), "mcp_x `q`");
        assert_eq!(tool_label("ls", &json!({})), "ls");
        assert_eq!(tool_label("bash", &Value::Null), "bash");
        let long = tool_label("bash", &json!({"command": "😀".repeat(100)}));
        assert!(crate::text::js_len(&long) <= "bash ``".len() + LABEL_DETAIL_MAX);
        assert!(long.ends_with("…`"));
    }

    #[test]
    fn render_says_where_the_kept_chunks_are() {
        let text: String = (1..=300).map(|i| format!("line {i:04} 日本 😀 {}\n", "x".repeat(30))).collect();
        let c = chunk(&text);
        let keep: Vec<bool> = (0..c.chunks.len()).map(|i| i % 3 == 1).collect();
        let d = distill(&text, &c.chunks, &keep, Numbering::Output);
        let r = render(&d).unwrap();
        assert_eq!(r.text, replacement(&d).unwrap());
        let kept: Vec<usize> = (0..c.chunks.len()).filter(|i| keep[*i]).collect();
        assert_eq!(r.verbatim.iter().map(|v| v.chunk).collect::<Vec<_>>(), kept);
        for v in &r.verbatim {
            assert_eq!(&r.text[v.start..v.end], chunk_text(&text, &c.chunks[v.chunk]).unwrap());
        }
    }

    #[test]
    fn recall_call_escapes_the_id() {
        assert_eq!(recall_call("3f9c2a1b"), r#"recall({"entryId":"3f9c2a1b"})"#);
        assert_eq!(recall_call("a\"b"), r#"recall({"entryId":"a\"b"})"#);
    }

    fn distill<'a>(text: &'a str, chunks: &'a [Chunk], keep: &'a [bool], numbering: Numbering) -> Distill<'a> {
        Distill {
            text,
            chunks,
            keep,
            label: "bash `rg -n -i status`",
            entry_id: "3f9c2a1b",
            numbering,
            lines: crate::text::line_count(text),
            chars: crate::text::js_len(text),
        }
    }

    #[test]
    fn header_kept_chunks_and_output_line_omissions() {
        let text: String = (1..=300).map(|i| format!("line {i:04} {}\n", "x".repeat(30))).collect();
        let c = chunk(&text);
        assert!(c.chunks.len() >= 4);
        let mut keep = vec![false; c.chunks.len()];
        keep[1] = true;
        let got = replacement(&distill(&text, &c.chunks, &keep, Numbering::Output)).unwrap();
        let k = &c.chunks[1];
        let header = format!(
            "[context-guard] Distilled the output of bash `rg -n -i status`: kept {} of 300 lines ({} of 12.3k chars); \
             the rest was judged not needed for the answer. Full output: recall({{\"entryId\":\"3f9c2a1b\"}}).",
            k.lines,
            short_count(k.chars)
        );
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines[0], header);
        assert_eq!(lines[1], format!("[… output lines 1-{} omitted]", c.chunks[0].lines));
        assert_eq!(lines[2], "line ".to_string() + &format!("{:04}", k.first_line + 1) + " " + &"x".repeat(30));
        let tail_first = k.first_line + k.lines + 1;
        assert_eq!(*lines.last().unwrap(), format!("[… output lines {tail_first}-300 omitted]"));
        assert_eq!(lines.len(), 1 + 1 + k.lines + 1);
    }

    #[test]
    fn the_header_has_the_shape_of_the_guard_spec() {
        // 9 kept lines of 1.2k characters out of 410 lines and 36.1k (the design's example header).
        let text =
            format!("{}{}", format!("{}\n", "k".repeat(133)).repeat(9), format!("{}\n", "r".repeat(86)).repeat(401));
        let kept = Chunk { start: 0, end: 9 * 134, first_line: 0, lines: 9, chars: 9 * 134, files: vec![] };
        let rest = Chunk { start: 9 * 134, end: text.len(), first_line: 9, lines: 401, chars: 401 * 87, files: vec![] };
        let chunks = [kept, rest];
        let got = replacement(&distill(&text, &chunks, &[true, false], Numbering::Output)).unwrap();
        assert_eq!(
            got.lines().next().unwrap(),
            "[context-guard] Distilled the output of bash `rg -n -i status`: kept 9 of 410 lines (1.2k of 36.1k chars); \
             the rest was judged not needed for the answer. Full output: recall({\"entryId\":\"3f9c2a1b\"})."
        );
        assert_eq!(got.lines().last().unwrap(), "[… output lines 10-410 omitted]");
    }

    #[test]
    fn read_omissions_use_file_line_numbers() {
        let text: String = (0..200).map(|i| format!("{}\n", "r".repeat(40 + i % 3))).collect();
        let c = chunk(&text);
        let mut keep = vec![true; c.chunks.len()];
        keep[0] = false;
        let got = replacement(&distill(&text, &c.chunks, &keep, Numbering::File { offset: 501 })).unwrap();
        let second = got.lines().nth(1).unwrap();
        assert_eq!(second, format!("[… file lines 501-{} omitted]", 500 + c.chunks[0].lines));
    }

    #[test]
    fn grep_omissions_name_five_files_then_count_the_rest() {
        let mk = |files: &[&str]| Chunk {
            start: 0,
            end: 0,
            first_line: 0,
            lines: 2,
            chars: 10,
            files: files.iter().map(|s| s.to_string()).collect(),
        };
        let a = mk(&["a.ts", "b.ts"]);
        let b = mk(&["b.ts", "c.ts", "d.ts", "e.ts", "f.ts", "g\nh.ts"]);
        assert_eq!(
            omission(&[&a, &b], Numbering::Grep),
            "[… 4 lines omitted from a.ts, b.ts, c.ts, d.ts, e.ts and 2 more]"
        );
        assert_eq!(omission(&[&mk(&[])], Numbering::Grep), "[… 2 lines omitted]");
        assert_eq!(omission(&[&mk(&["x"])], Numbering::Output), "[… output lines 1-2 omitted]");
        let one = Chunk { lines: 1, first_line: 9, ..mk(&[]) };
        assert_eq!(omission(&[&one], Numbering::Output), "[… output line 10 omitted]");
        let one = Chunk { lines: 1, ..mk(&["a.ts", "b.ts"]) };
        assert_eq!(omission(&[&one], Numbering::Grep), "[… 1 line omitted from a.ts, b.ts]");
        assert_eq!(omission(&[&one], Numbering::File { offset: 100 }), "[… file line 100 omitted]");
        // Past the few looked up in the list, files are counted in a set: each once.
        let names: Vec<String> = (0..40).chain(0..40).map(|i| format!("f{i}")).collect();
        let many: Vec<&str> = names.iter().map(String::as_str).collect();
        let (c, d) = (mk(&many[..20]), mk(&many[20..]));
        assert_eq!(omission(&[&c, &d], Numbering::Grep), "[… 4 lines omitted from f0, f1, f2, f3, f4 and 35 more]");
    }

    #[test]
    fn nothing_kept_is_one_line() {
        let text = "a\nb\n".repeat(1000);
        let c = chunk(&text);
        let keep = vec![false; c.chunks.len()];
        let got = replacement(&distill(&text, &c.chunks, &keep, Numbering::Output)).unwrap();
        assert_eq!(
            got,
            "[context-guard] Removed the output of bash `rg -n -i status`: 2000 lines (4.0k chars) judged not needed \
             for the answer. Full output: recall({\"entryId\":\"3f9c2a1b\"})."
        );
    }

    #[test]
    fn kept_chunks_are_verbatim_with_emoji_and_cjk() {
        let text: String = (0..40).map(|i| format!("{i:02}{}😀\n", "日本語".repeat(100))).collect();
        let c = chunk(&text);
        let keep: Vec<bool> = (0..c.chunks.len()).map(|i| i % 2 == 0).collect();
        let got = replacement(&distill(&text, &c.chunks, &keep, Numbering::Output)).unwrap();
        for (i, k) in c.chunks.iter().enumerate() {
            let t = chunk_text(&text, k).unwrap();
            assert_eq!(got.contains(t), keep[i]);
        }
        // A chunk range that does not fit the text gives no replacement.
        let bad = [Chunk { start: 3, end: 4, ..c.chunks[0].clone() }];
        assert!(replacement(&distill(&text, &bad, &[true], Numbering::Output)).is_none());
    }
}
