//! What the `recall` tool returns (docs/GUARD.md, "`recall`").
//!
//! For: the text of a recalled tool output, whole or searched with `pattern`
//! or windowed with `offset`/`limit`, within the caps of Pi's `read` tool, and
//! the error texts the model sees. Not for: reading the session (the extension
//! calls `getEntry` and hands the raw message over) or attaching images (the
//! reply names which image blocks to attach).
//!
//! **Deliberate change from the original guard:** `pattern` is `regex-lite` syntax, not a
//! JavaScript regex. regex-lite matches in time linear in the text (times the
//! compiled pattern's size, which is bounded here), so no sandbox or timeout is
//! needed. It has no look-around and no back-references; those answer with an
//! error that says so.
//!
//! Recalling a user prompt returns the transcript of its exchange (`## user`,
//! `## assistant` with `[tool call]` lines, `## tool result (tool)`, `## custom
//! message (type)`), with the user's images attached: for an exchange the
//! guard omitted exactly the entries its record lists, for any other prompt the
//! entries up to the next prompt, as the original guard's `recall` did.

use regex_lite::{Regex, RegexBuilder};
use serde::Serialize;
use serde_json::Value;

use crate::entry::{blocks_text, Block, Message};
use crate::guard::render::MARK;
use crate::text::{js_len, js_prefix};

/// Most lines returned at once (Pi's `read` tool: 2,000 lines).
pub const MAX_LINES: usize = 2000;
/// Most characters returned at once: 50 KB as Pi's `read` tool counts it,
/// taken as 50 × 1,024 JavaScript characters because the reply is a
/// JavaScript string (for ASCII that is exactly 50 KB of UTF-8).
pub const MAX_CHARS: usize = 50 * 1024;
/// Longest accepted pattern (the original guard's limit: ≤ 500 chars).
pub const MAX_PATTERN: usize = 500;
/// Each line is matched on its first this many characters (as the original guard).
pub const MATCH_WINDOW: usize = 4000;
/// Images attached to a plain recall at most (the original guard's 6).
pub const MAX_IMAGES: usize = 6;
/// regex-lite's search time is O(compiled pattern size × text searched), so a
/// pattern's compiled size (regex-lite's `size_limit` unit, about bytes of
/// its NFA) is capped by the text it will search: size × bytes ≤ this. Measured
/// natively at the release profile's `opt-level = "z"`, the costliest patterns
/// (`(a*)*b` over a megabyte of `a`, `\w{1,20}\d{1,20}$`, `(?:a?){200}a{200}`)
/// take at most ~3.5e-7 ms per unit, so this bound is ~350 ms natively and
/// well under a second in wasm. A Pi tool output is usually ≤ 50 KB (Pi's own
/// truncation), where it allows 20,000: hundreds of alternatives.
pub const SEARCH_WORK: usize = 1_000_000_000;
/// Every text allows at least this size: a few alternatives and classes, such
/// as `(?i)error|warn` (616) or `\b(status|error)\b` (680).
pub const MIN_PATTERN_SIZE: usize = 1024;
/// And at most this (guards compile time and memory on tiny texts).
pub const MAX_PATTERN_SIZE: usize = 64 * 1024;

/// The tool's description for the model (registered by the extension).
pub const DESCRIPTION: &str = "Returns the full original of a tool output or earlier exchange that context-guard \
distilled or omitted. Use the entryId from a [context-guard] note. Optionally search it with `pattern` (regex-lite \
syntax: like most regex flavours, but without look-around or back-references; use (?i) for case-insensitive) or page \
through it with `offset`/`limit`. Output is capped at 2000 lines and 50KB; a note says how to continue.";
pub const PARAM_ENTRY_ID: &str = "The entry id from the [context-guard] note";
pub const PARAM_PATTERN: &str = "Only lines matching this regex-lite pattern (at most 500 characters, no look-around \
or back-references), prefixed with their line numbers";
pub const PARAM_OFFSET: &str = "First line to return, 1-based; with `pattern`, the first matching line";
pub const PARAM_LIMIT: &str = "Most lines to return";

/// The texts of the tool definition, for the extension to register.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "RecallToolInfo"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    pub description: &'static str,
    pub entry_id: &'static str,
    pub pattern: &'static str,
    pub offset: &'static str,
    pub limit: &'static str,
}

pub fn tool_info() -> ToolInfo {
    ToolInfo {
        description: DESCRIPTION,
        entry_id: PARAM_ENTRY_ID,
        pattern: PARAM_PATTERN,
        offset: PARAM_OFFSET,
        limit: PARAM_LIMIT,
    }
}

/// A recall call with what the extension found for its id.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallRequest {
    pub entry_id: String,
    pub pattern: Option<String>,
    pub offset: Option<f64>,
    pub limit: Option<f64>,
    /// The raw message of the entry (`getEntry(entryId).message`), `None` when
    /// there is no such entry or it holds no message.
    pub message: Option<Message>,
    /// For a user message: the raw entries after it on the branch and the
    /// ids the latest record lists as omitted with it (see [`transcript`]).
    pub exchange: Option<ExchangeSource>,
}

/// What an exchange transcript is read from.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ExchangeSource {
    /// The ids the latest record omitting this exchange lists (empty when it
    /// lists none: then the entries up to the next prompt); `None` when no
    /// record omitted it.
    pub omitted: Option<Vec<String>>,
    /// Branch entries after the prompt, in order: `(id, raw message)`.
    pub entries: Vec<(String, Message)>,
}

impl ExchangeSource {
    pub fn from_value(v: Value) -> ExchangeSource {
        let mut f = crate::read::Fields::of(v);
        let omitted = match f.take("omitted") {
            Value::Array(ids) => Some(ids.into_iter().filter_map(|i| i.as_str().map(str::to_string)).collect()),
            _ => None,
        };
        ExchangeSource {
            omitted,
            entries: f.list("entries", |e| {
                let mut e = crate::read::Fields::of(e);
                (e.string("id"), Message::from_value(e.take("message")))
            }),
        }
    }
}

impl RecallRequest {
    /// Reads a call; a parameter of the wrong type reads as absent, except a
    /// non-numeric `offset` or `limit`, which reads as invalid (NaN) so the
    /// model is told.
    pub fn from_value(v: Value) -> RecallRequest {
        let mut f = crate::read::Fields::of(v);
        let param = |f: &mut crate::read::Fields, key: &str| match f.take(key) {
            Value::Null => None,
            n => Some(n.as_f64().unwrap_or(f64::NAN)),
        };
        RecallRequest {
            entry_id: f.string("entryId"),
            pattern: f.opt_string("pattern"),
            offset: param(&mut f, "offset"),
            limit: param(&mut f, "limit"),
            message: match f.take("message") {
                Value::Null => None,
                m => Some(Message::from_value(m)),
            },
            exchange: match f.take("exchange") {
                Value::Null => None,
                x => Some(ExchangeSource::from_value(x)),
            },
        }
    }
}

crate::deserialize_via_value!(RecallRequest);

/// What the tool returns.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallReply {
    pub text: String,
    /// The call could not be answered (unknown id, bad pattern, bad offset).
    pub is_error: bool,
    /// Indexes into the raw message's `content` of the image blocks to attach
    /// after the text, in order.
    pub images: Vec<usize>,
    /// For an exchange transcript: `[entry, block]` of the user images to
    /// attach, entry 0 being the prompt and `i + 1` the source's entry `i`.
    pub exchange_images: Vec<[usize; 2]>,
}

/// What a recalled entry is.
enum Recalled<'a> {
    /// A tool result: its text blocks and the indexes of its image blocks.
    Output { text: String, images: Vec<usize> },
    /// Anything else: nothing to recall.
    Other(&'a str),
}

fn error(text: String) -> RecallReply {
    RecallReply { text, is_error: true, ..RecallReply::default() }
}

/// [`recall`] over JSON text (see `pass::plan_json` for why text).
pub fn recall_json(request: &str) -> Result<String, String> {
    let request =
        crate::read::from_json(request, RecallRequest::from_value).map_err(|e| format!("recall request: {e}"))?;
    serde_json::to_string(&recall(&request)).map_err(|e| format!("recall reply: {e}"))
}

/// [`tool_info`] as JSON text.
pub fn tool_info_json() -> String {
    serde_json::to_string(&tool_info()).unwrap_or_default()
}

/// The message for an id that names nothing recallable.
pub fn unknown_entry(entry_id: &str) -> String {
    format!(
        "No entry {} on this session branch. Use the entryId from a {MARK} note, as in recall({{\"entryId\":\"3f9c2a1b\"}}).",
        serde_json::to_string(&crate::guard::render::one_line(entry_id, 80)).unwrap_or_default()
    )
}

/// Answers a recall call.
pub fn recall(req: &RecallRequest) -> RecallReply {
    let recalled = match &req.message {
        None => return error(unknown_entry(&req.entry_id)),
        Some(Message::ToolResult { content, .. }) => Recalled::Output {
            text: blocks_text(content),
            images: content
                .iter()
                .enumerate()
                .filter(|(_, b)| matches!(b, Block::Image { .. }))
                .map(|(i, _)| i)
                .collect(),
        },
        Some(prompt @ Message::User { .. }) => match &req.exchange {
            Some(source) => {
                let (text, images) = transcript(prompt, source);
                return exchange_reply(req, &text, images);
            }
            // The extension found no branch to read the exchange from.
            None => Recalled::Other("a user message"),
        },
        Some(Message::Assistant { .. }) => Recalled::Other("an assistant message"),
        Some(_) => Recalled::Other("not a tool output"),
    };
    let (text, images) = match recalled {
        Recalled::Output { text, images } => (text, images),
        Recalled::Other(what) => {
            return error(format!(
                "Entry {} is {what}, not a tool output that {MARK} distilled. Use the entryId from a {MARK} note.",
                serde_json::to_string(&crate::guard::render::one_line(&req.entry_id, 80)).unwrap_or_default()
            ))
        }
    };
    let query = match Query::new(req, &text) {
        Ok(q) => q,
        Err(e) => return error(e),
    };
    let plain = query.pattern.is_none() && query.offset == 1 && query.limit.is_none();
    let mut reply = search(&text, &query);
    if !images.is_empty() {
        if plain && !reply.is_error {
            reply.images = images.iter().take(MAX_IMAGES).copied().collect();
            if images.len() > MAX_IMAGES {
                reply.text.push_str(&format!("\n[{} of {} images attached]", MAX_IMAGES, images.len()));
            }
        } else {
            let n = images.len();
            reply.text.push_str(&format!(
                "\n[This output also has {n} image{}; recall without pattern, offset and limit to see {}]",
                if n == 1 { "" } else { "s" },
                if n == 1 { "it" } else { "them" }
            ));
        }
    }
    reply
}

/// The transcript searched or windowed like an output; user images attached
/// only to a plain recall.
fn exchange_reply(req: &RecallRequest, text: &str, images: Vec<[usize; 2]>) -> RecallReply {
    let query = match Query::new(req, text) {
        Ok(q) => q,
        Err(e) => return error(e),
    };
    let plain = query.pattern.is_none() && query.offset == 1 && query.limit.is_none();
    let mut reply = search(text, &query);
    if plain && !reply.is_error {
        reply.exchange_images = images.into_iter().take(MAX_IMAGES).collect();
    }
    reply
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The transcript of an exchange: the prompt, then exactly the entries
/// the record lists as omitted (without a record, or a record without ids:
/// the entries up to the next prompt), and the `[entry, block]` of every user
/// image.
pub fn transcript(prompt: &Message, source: &ExchangeSource) -> (String, Vec<[usize; 2]>) {
    let mut sections: Vec<String> = Vec::new();
    let mut images: Vec<[usize; 2]> = Vec::new();
    let image_blocks = |blocks: &[Block]| -> Vec<usize> {
        blocks.iter().enumerate().filter(|(_, b)| matches!(b, Block::Image { .. })).map(|(i, _)| i).collect()
    };
    let user = |k: usize, content: &crate::entry::Content, images: &mut Vec<[usize; 2]>| {
        let mut text = format!("## user\n{}", crate::guard::run::content_text(content));
        if let crate::entry::Content::Blocks(b) = content {
            let found = image_blocks(b);
            if !found.is_empty() {
                text.push_str(&format!("\n[{} attached]", plural(found.len(), "image", "images")));
            }
            images.extend(found.into_iter().map(|i| [k, i]));
        }
        text
    };
    if let Message::User { content } = prompt {
        sections.push(user(0, content, &mut images));
    }
    let mut previous_calls = false;
    for (k, (id, m)) in source.entries.iter().enumerate() {
        match source.omitted.as_deref() {
            Some(ids) if !ids.is_empty() && !ids.contains(id) => continue,
            // Without ids: up to the next prompt (a user message that is not
            // a steering message).
            Some([]) | None if m.is_user() && !previous_calls => break,
            _ => {}
        }
        previous_calls = matches!(m, Message::ToolResult { .. }) || m.has_tool_calls();
        let section = match m {
            Message::User { content } => user(k + 1, content, &mut images),
            Message::Assistant { content, .. } => {
                let mut text = String::from("## assistant");
                for b in content {
                    match b {
                        Block::Text { text: t } if !t.is_empty() => {
                            text.push('\n');
                            text.push_str(t);
                        }
                        Block::ToolCall { name, arguments, .. } => {
                            text.push_str(&format!(
                                "\n[tool call] {name} {}",
                                serde_json::to_string(arguments).unwrap_or_default()
                            ));
                        }
                        _ => {}
                    }
                }
                text
            }
            Message::ToolResult { tool_name, content, .. } => {
                let mut text = format!("## tool result ({tool_name})\n{}", blocks_text(content));
                let n = image_blocks(content).len();
                if n > 0 {
                    text.push_str(&format!(
                        "\n[{}: {} shows {}]",
                        plural(n, "image", "images"),
                        crate::guard::render::recall_call(id),
                        if n == 1 { "it" } else { "them" }
                    ));
                }
                text
            }
            Message::Custom { custom_type, content } => {
                format!("## custom message ({custom_type})\n{}", content.text())
            }
            _ => continue,
        };
        sections.push(section);
    }
    (crate::text::join(&sections, "\n\n"), images)
}

/// The checked parameters of a call.
struct Query {
    pattern: Option<(String, Regex)>,
    offset: usize,
    limit: Option<usize>,
}

impl Query {
    fn new(req: &RecallRequest, text: &str) -> Result<Query, String> {
        let whole = |name: &str, v: Option<f64>| -> Result<Option<usize>, String> {
            match v {
                None => Ok(None),
                Some(n) if n.is_finite() && n >= 1.0 => Ok(Some(n.floor().min(1e15) as usize)),
                Some(_) => Err(format!("`{name}` must be a whole number from 1")),
            }
        };
        let offset = whole("offset", req.offset)?.unwrap_or(1);
        let limit = whole("limit", req.limit)?;
        let pattern = match req.pattern.as_deref().filter(|p| !p.is_empty()) {
            None => None,
            Some(p) => {
                let searched = text_lines(text).map(|l| js_prefix(l, MATCH_WINDOW).len()).sum();
                Some((p.to_string(), compile(p, searched)?))
            }
        };
        Ok(Query { pattern, offset, limit })
    }
}

/// The compiled size a pattern may have to search `bytes` of text.
pub fn pattern_size_limit(bytes: usize) -> usize {
    (SEARCH_WORK / bytes.max(1)).clamp(MIN_PATTERN_SIZE, MAX_PATTERN_SIZE)
}

/// Compiles a recall pattern to search `bytes` of text, or says why it cannot
/// be used.
pub fn compile(pattern: &str, bytes: usize) -> Result<Regex, String> {
    if js_len(pattern) > MAX_PATTERN {
        return Err(format!("`pattern` is longer than {MAX_PATTERN} characters; use a shorter one"));
    }
    if let Some(what) = unsupported(pattern) {
        return Err(format!(
            "`pattern` uses {what}, which recall does not support: patterns are regex-lite syntax, which matches in \
             linear time and has no look-around or back-references. Search for the text itself, or for a wider line."
        ));
    }
    RegexBuilder::new(pattern).size_limit(MAX_PATTERN_SIZE).build().map_err(|e| {
        format!("`pattern` is not valid regex-lite syntax: {}", crate::guard::render::one_line(&e.to_string(), 300))
    })?;
    RegexBuilder::new(pattern).size_limit(pattern_size_limit(bytes)).build().map_err(|_| {
        format!(
            "`pattern` is too complex to search {} bytes quickly: search time grows with the pattern's size. Use \
             fewer alternatives or smaller repetition counts, or search for a plain word.",
            crate::text::short_count(bytes)
        )
    })
}

/// The first look-around or back-reference in a pattern, outside character
/// classes and escapes.
fn unsupported(pattern: &str) -> Option<&'static str> {
    let bytes = pattern.as_bytes();
    let mut i = 0;
    let mut in_class = false;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => {
                if let Some(&next) = bytes.get(i + 1) {
                    if !in_class && (next.is_ascii_digit() && next != b'0' || next == b'k') {
                        return Some("a back-reference (\\1, \\k<name>)");
                    }
                }
                i += 2;
                continue;
            }
            b'[' if !in_class => {
                in_class = true;
                // A `]` right after `[` or `[^` is a literal.
                if bytes.get(i + 1) == Some(&b'^') {
                    i += 1;
                }
                if bytes.get(i + 1) == Some(&b']') {
                    i += 1;
                }
            }
            b']' if in_class => in_class = false,
            b'(' if !in_class => {
                let rest = bytes.get(i + 1..).unwrap_or(&[]);
                if rest.starts_with(b"?=") || rest.starts_with(b"?!") {
                    return Some("a look-ahead ((?=…) or (?!…))");
                }
                if rest.starts_with(b"?<=") || rest.starts_with(b"?<!") {
                    return Some("a look-behind ((?<=…) or (?<!…))");
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The lines of a text; a final newline does not start another line.
fn text_lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let empty = text.is_empty();
    body.split('\n').filter(move |_| !empty)
}

/// The reply for a text: whole, matched or windowed, within the caps.
fn search(text: &str, q: &Query) -> RecallReply {
    let plain = q.pattern.is_none() && q.offset == 1 && q.limit.is_none();
    if plain && js_len(text) <= MAX_CHARS && text_lines(text).nth(MAX_LINES).is_none() {
        // Within the caps: every byte as it was.
        return RecallReply {
            text: text.to_string(),
            is_error: false,
            images: Vec::new(),
            exchange_images: Vec::new(),
        };
    }
    // Candidate lines: (line number, line).
    let mut total = 0usize;
    let mut picked: Vec<(usize, &str)> = Vec::new();
    let want = q.limit.unwrap_or(usize::MAX).min(MAX_LINES);
    for (i, line) in text_lines(text).enumerate() {
        if let Some((_, re)) = &q.pattern {
            if !re.is_match(js_prefix(line, MATCH_WINDOW)) {
                continue;
            }
        }
        total += 1;
        if total >= q.offset && picked.len() < want {
            picked.push((i + 1, line));
        }
    }
    let what = if q.pattern.is_some() { "matching lines" } else { "lines" };
    if let (Some((p, _)), 0) = (&q.pattern, total) {
        let searched = text_lines(text).count();
        return RecallReply {
            text: format!("No lines match the pattern {} ({searched} lines searched).", show_pattern(p)),
            is_error: false,
            ..RecallReply::default()
        };
    }
    if q.offset > total {
        return error(format!("`offset` {} is past the end: there are {total} {what}.", q.offset));
    }

    let mut out = String::new();
    let mut chars = 0usize;
    let mut shown = 0usize;
    let mut cut_note = None;
    for (n, line) in &picked {
        let numbered;
        let line: &str = if q.pattern.is_some() {
            numbered = format!("{n}: {line}");
            &numbered
        } else {
            line
        };
        let len = js_len(line) + usize::from(shown > 0);
        if chars.saturating_add(len) > MAX_CHARS {
            if shown == 0 {
                // A single line over the cap: its start, and a note.
                out.push_str(js_prefix(line, MAX_CHARS));
                shown = 1;
                cut_note = Some(format!("[line {n} cut at 50KB]"));
            }
            break;
        }
        if shown > 0 {
            out.push('\n');
        }
        out.push_str(line);
        chars += len;
        shown += 1;
    }
    let first = q.offset;
    let last = first + shown.saturating_sub(1);
    if let Some(note) = cut_note {
        out.push('\n');
        out.push_str(&note);
    }
    if last < total {
        out.push_str(&format!(
            "\n[Showing {what} {first}-{last} of {total}. Use offset={} to continue.]",
            last.saturating_add(1)
        ));
    }
    RecallReply { text: out, is_error: false, ..RecallReply::default() }
}

/// A pattern as a note shows it: one line, clipped.
fn show_pattern(p: &str) -> String {
    format!("/{}/", crate::guard::render::one_line(p, 120))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Block;
    use std::time::Instant;

    fn output(text: &str) -> Option<Message> {
        Some(Message::ToolResult {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            content: vec![Block::Text { text: text.into() }],
            is_error: false,
        })
    }
    fn req(text: &str) -> RecallRequest {
        RecallRequest { entry_id: "e1".into(), message: output(text), ..RecallRequest::default() }
    }
    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_plain_recall_returns_every_byte() {
        let text = "a\n\nb 😀 日本\n";
        let r = recall(&req(text));
        assert_eq!(r, RecallReply { text: text.into(), ..RecallReply::default() });
    }

    #[test]
    fn unknown_ids_and_other_entries_are_errors_that_point_to_the_note() {
        let r = recall(&RecallRequest { entry_id: "nope".into(), ..RecallRequest::default() });
        assert!(r.is_error);
        assert!(r.text.contains("\"nope\"") && r.text.contains("[context-guard] note"), "{}", r.text);
        let r = recall(&RecallRequest {
            entry_id: "u".into(),
            message: Some(Message::User { content: crate::entry::Content::Text("hi".into()) }),
            ..RecallRequest::default()
        });
        assert!(r.is_error);
    }

    #[test]
    fn caps_at_2000_lines_with_a_note() {
        let text = numbered(5000);
        let r = recall(&req(&text));
        assert!(!r.is_error);
        let lines: Vec<&str> = r.text.lines().collect();
        assert_eq!(lines.len(), 2001);
        assert_eq!(lines[1999], "line 2000");
        assert_eq!(lines[2000], "[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]");
        let r = recall(&RecallRequest { offset: Some(4999.0), ..req(&text) });
        assert_eq!(r.text, "line 4999\nline 5000");
    }

    #[test]
    fn caps_at_50kb_with_a_note() {
        let line = "x".repeat(999);
        let text = format!("{line}\n").repeat(100);
        let r = recall(&req(&text));
        let lines: Vec<&str> = r.text.lines().collect();
        assert_eq!(lines.len(), 51 + 1);
        assert!(js_len(&r.text) <= MAX_CHARS + 100);
        assert_eq!(*lines.last().unwrap(), "[Showing lines 1-51 of 100. Use offset=52 to continue.]");
        // Emoji count as two.
        let text = format!("{}\n", "😀".repeat(500)).repeat(100);
        let r = recall(&req(&text));
        assert_eq!(r.text.lines().count(), 51 + 1);
    }

    #[test]
    fn a_line_over_50kb_is_cut() {
        let text = format!("short\n{}\nend\n", "日".repeat(60_000));
        let r = recall(&RecallRequest { offset: Some(2.0), ..req(&text) });
        let lines: Vec<&str> = r.text.lines().collect();
        assert_eq!(js_len(lines[0]), MAX_CHARS);
        assert_eq!(lines[1], "[line 2 cut at 50KB]");
        assert_eq!(lines[2], "[Showing lines 2-2 of 3. Use offset=3 to continue.]");
        // A plain recall stops before it and says how to go on.
        let r = recall(&req(&text));
        assert_eq!(r.text, "short\n[Showing lines 1-1 of 3. Use offset=2 to continue.]");
        // Emoji are never split.
        let text = "😀".repeat(40_000);
        let r = recall(&req(&text));
        assert!(r.text.starts_with("😀") && r.text.contains("[line 1 cut at 50KB]"));
    }

    #[test]
    fn patterns_return_numbered_matching_lines() {
        let text = "alpha\nbeta\nALPHA two\ngamma\nalphabet\n";
        let r = recall(&RecallRequest { pattern: Some("(?i)^alpha".into()), ..req(text) });
        assert_eq!(r.text, "1: alpha\n3: ALPHA two\n5: alphabet");
        // offset counts matches, limit caps them.
        let r =
            recall(&RecallRequest { pattern: Some("alpha".into()), offset: Some(2.0), limit: Some(1.0), ..req(text) });
        assert_eq!(r.text, "5: alphabet");
        let r = recall(&RecallRequest { pattern: Some("(?i)alpha".into()), limit: Some(2.0), ..req(text) });
        assert_eq!(r.text, "1: alpha\n3: ALPHA two\n[Showing matching lines 1-2 of 3. Use offset=3 to continue.]");
        let r = recall(&RecallRequest { pattern: Some("zeta".into()), ..req(text) });
        assert!(!r.is_error);
        assert_eq!(r.text, "No lines match the pattern /zeta/ (5 lines searched).");
    }

    #[test]
    fn windows_and_bad_parameters() {
        let text = numbered(10);
        let r = recall(&RecallRequest { offset: Some(3.0), limit: Some(2.0), ..req(&text) });
        assert_eq!(r.text, "line 3\nline 4\n[Showing lines 3-4 of 10. Use offset=5 to continue.]");
        let r = recall(&RecallRequest { offset: Some(9.0), limit: Some(5.0), ..req(&text) });
        assert_eq!(r.text, "line 9\nline 10");
        let r = recall(&RecallRequest { offset: Some(11.0), ..req(&text) });
        assert!(r.is_error && r.text.contains("past the end"));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(recall(&RecallRequest { offset: Some(bad), ..req(&text) }).is_error);
            assert!(recall(&RecallRequest { limit: Some(bad), ..req(&text) }).is_error);
        }
    }

    #[test]
    fn unsupported_patterns_answer_with_a_clear_error() {
        for (p, what) in [
            ("foo(?=bar)", "look-ahead"),
            ("foo(?!bar)", "look-ahead"),
            ("(?<=a)b", "look-behind"),
            ("(?<!a)b", "look-behind"),
            (r"(a)\1", "back-reference"),
            (r"(?<n>a)\k<n>", "back-reference"),
        ] {
            let r = recall(&RecallRequest { pattern: Some(p.into()), ..req("a") });
            assert!(r.is_error && r.text.contains(what) && r.text.contains("regex-lite"), "{p}: {}", r.text);
        }
        // Escaped or inside a class they are literals.
        for p in [r"\(?=", "[(?=]", r"[\]](?:x)", r"\\", r"\0"] {
            assert!(unsupported(p).is_none(), "{p}");
        }
        // Named groups are fine.
        assert!(compile("(?<name>a)", 10).is_ok());
        let r = recall(&RecallRequest { pattern: Some("(unclosed".into()), ..req("a") });
        assert!(r.is_error && r.text.contains("not valid regex-lite syntax"));
        let r = recall(&RecallRequest { pattern: Some("a".repeat(501)), ..req("a") });
        assert!(r.is_error && r.text.contains("500"));
    }

    #[test]
    fn images_attach_only_to_a_plain_recall() {
        let mut content = vec![Block::Text { text: "shot".into() }];
        for _ in 0..8 {
            content.push(Block::Image { data: "x".into(), mime_type: "image/png".into() });
        }
        let message =
            Some(Message::ToolResult { tool_call_id: "c".into(), tool_name: "t".into(), content, is_error: false });
        let r = recall(&RecallRequest { entry_id: "e".into(), message: message.clone(), ..RecallRequest::default() });
        assert_eq!(r.images, [1, 2, 3, 4, 5, 6]);
        assert!(r.text.ends_with("[6 of 8 images attached]"));
        let r = recall(&RecallRequest {
            entry_id: "e".into(),
            message,
            pattern: Some("s".into()),
            ..RecallRequest::default()
        });
        assert!(r.images.is_empty());
        assert!(r.text.contains("8 images"));
    }

    fn megabyte() -> String {
        let line = format!("{}!\n", "a".repeat(3999));
        line.repeat(256)
    }

    /// Patterns of the kind that make backtracking engines hang.
    pub const PATHOLOGICAL: [&str; 7] = [
        "(a*)*b",
        "(a|aa)*c",
        "(?:a?){200}a{200}",
        "(x+x+)+y",
        "\\w{1,100}\\d{1,100}$",
        "\\w{1,20}\\d{1,20}$",
        "(.*a){20}",
    ];

    #[test]
    fn costly_patterns_are_refused_on_big_texts_and_allowed_on_small_ones() {
        let big = megabyte();
        let r = recall(&RecallRequest { pattern: Some("(?:a?){200}a{200}".into()), ..req(&big) });
        assert!(r.is_error && r.text.contains("too complex"), "{}", r.text);
        let r = recall(&RecallRequest { pattern: Some("(?:a?){200}a{200}".into()), ..req("aaa\nb") });
        assert!(!r.is_error, "{}", r.text);
        // Ordinary patterns work on a megabyte.
        assert!(compile("(?i)error|warn", big.len()).is_ok());
        assert!(compile("\\b(status|error)\\b", big.len()).is_ok());
        assert_eq!(pattern_size_limit(50 * 1024), 19_531);
        assert_eq!(pattern_size_limit(0), MAX_PATTERN_SIZE);
        assert_eq!(pattern_size_limit(usize::MAX), MIN_PATTERN_SIZE);
    }

    /// `cargo test --release -p context-guard-guard-read -- --ignored --nocapture pathological`
    #[test]
    #[ignore = "timing: run in release"]
    fn pathological_patterns_over_a_megabyte_answer_fast() {
        let text = megabyte();
        for p in PATHOLOGICAL {
            let started = Instant::now();
            let r = recall(&RecallRequest { pattern: Some(p.to_string()), ..req(&text) });
            let ms = started.elapsed().as_millis();
            println!("{ms:>5} ms  {p}  {}", r.text.chars().take(60).collect::<String>());
            assert!(ms < 1000, "{p}: {ms} ms");
        }
    }

    #[test]
    fn an_omitted_exchange_recalls_as_a_transcript_with_user_images() {
        let m = |v: Value| Message::from_value(v);
        let prompt = m(serde_json::json!({"role": "user", "content": [
            {"type": "text", "text": "fix 日本 😀"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]}));
        let source = ExchangeSource {
            omitted: Some(vec!["a".into(), "r".into(), "c".into()]),
            entries: vec![
                (
                    "a".into(),
                    m(serde_json::json!({"role": "assistant", "content": [
                    {"type": "text", "text": "Looking."}, {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}]})),
                ),
                (
                    "r".into(),
                    m(serde_json::json!({"role": "toolResult", "toolName": "bash", "content": [
                    {"type": "text", "text": "a.rs"}, {"type": "image", "data": "AAAA"}]})),
                ),
                ("c".into(), m(serde_json::json!({"role": "custom", "customType": "notice", "content": "done"}))),
                ("later".into(), m(serde_json::json!({"role": "user", "content": "not part of it"}))),
            ],
        };
        let req = RecallRequest {
            entry_id: "u".into(),
            message: Some(prompt),
            exchange: Some(source),
            ..RecallRequest::default()
        };
        let reply = recall(&req);
        assert!(!reply.is_error);
        assert_eq!(
            reply.text,
            "## user\nfix 日本 😀\n[1 image attached]\n\n## assistant\nLooking.\n[tool call] bash {\"command\":\"ls\"}\n\n\
             ## tool result (bash)\na.rs\n[1 image: recall({\"entryId\":\"r\"}) shows it]\n\n## custom message (notice)\ndone"
        );
        assert_eq!(reply.exchange_images, vec![[0, 1]]);
        // A record without ids: up to the next prompt.
        let mut req2 = req.clone();
        if let Some(x) = &mut req2.exchange {
            x.omitted = Some(Vec::new());
        }
        assert_eq!(recall(&req2).text, reply.text);
        // A pattern searches the transcript and attaches nothing.
        req2.pattern = Some("bash".into());
        let found = recall(&req2);
        assert!(found.exchange_images.is_empty() && found.text.contains("[tool call] bash"));
        // A prompt no record omitted: the same transcript, up to the next prompt.
        let mut never = req.clone();
        if let Some(x) = &mut never.exchange {
            x.omitted = None;
        }
        assert_eq!(recall(&never), reply);
    }

    #[test]
    fn a_prompt_never_omitted_recalls_its_exchange_up_to_the_next_prompt() {
        let m = |v: Value| Message::from_value(v);
        let entries = vec![
            (
                "a1".into(),
                m(serde_json::json!({"role": "assistant", "content": [
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "src/a.rs"}}]})),
            ),
            (
                "r1".into(),
                m(serde_json::json!({"role": "toolResult", "toolName": "read", "content": [
                {"type": "text", "text": "fn a() {}"}]})),
            ),
            // Sent while the run went on: a steering message, part of the exchange.
            ("s".into(), m(serde_json::json!({"role": "user", "content": "also check b.rs"}))),
            (
                "a2".into(),
                m(serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": "Both are fine."}]})),
            ),
            ("next".into(), m(serde_json::json!({"role": "user", "content": "now the tests"}))),
            (
                "a3".into(),
                m(serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": "Running."}]})),
            ),
        ];
        let req = RecallRequest {
            entry_id: "u".into(),
            message: Some(m(serde_json::json!({"role": "user", "content": "is a.rs right?"}))),
            exchange: Some(ExchangeSource { omitted: None, entries }),
            ..RecallRequest::default()
        };
        let reply = recall(&req);
        assert_eq!(
            reply,
            RecallReply {
                text: "## user\nis a.rs right?\n\n## assistant\n[tool call] read {\"path\":\"src/a.rs\"}\n\n\
                       ## tool result (read)\nfn a() {}\n\n## user\nalso check b.rs\n\n## assistant\nBoth are fine."
                    .into(),
                ..RecallReply::default()
            }
        );
        // The last prompt: everything after it.
        let last = RecallRequest {
            exchange: Some(ExchangeSource {
                omitted: None,
                entries: req.exchange.as_ref().unwrap().entries[5..].to_vec(),
            }),
            message: Some(m(serde_json::json!({"role": "user", "content": "now the tests"}))),
            ..req.clone()
        };
        assert_eq!(recall(&last).text, "## user\nnow the tests\n\n## assistant\nRunning.");
        // Searched like an output.
        let found = recall(&RecallRequest { pattern: Some("fine".into()), ..req });
        assert!(!found.is_error);
        assert_eq!(found.text, "14: Both are fine.");
    }
}
