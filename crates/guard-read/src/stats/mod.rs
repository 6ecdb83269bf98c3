//! What the guard keeps out of the window, recomputed from the session
//! (docs/GUARD.md, "The status bar").
//!
//! For: the savings on the current branch right now (every output whose
//! model-visible text is a guard note while the raw entry's is not), the
//! lifetime total of every pass on the branch (the records' `savedChars`,
//! which survive a compaction that drops the edits themselves), classifier
//! usage, and the status-bar text built from them. Not for: deciding
//! anything; nothing here is remembered between calls, so the figures follow
//! `/tree`, reloads and compaction.
//!
//! The rules ([`tally`]) read each edited entry as an [`Edited`]: per message
//! its role, the start of its text and its size. The status bar builds those
//! from columns ([`columns`], [`columns_json`]); [`StatsInput`] holds the same
//! as whole entries, for tests that check the columns against it.

use serde::Serialize;

use crate::entry::{Block, Content, ContextEntry, Message};
use crate::guard::exchange::STUB_PREFIX;
use crate::guard::render::MARK;
use crate::kept::Stats;
use crate::size::message_chars;
use crate::text::short_count;

pub mod columns;

/// What the statistics read: the projected entries an edit changed (the
/// extension leaves out the unchanged ones, which add nothing), and the
/// branch reduced to its records and compactions, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatsInput {
    pub edited: Vec<ContextEntry>,
    pub marks: Vec<Mark>,
}

/// A branch entry the lifetime total reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Mark {
    /// A `context-guard` record (its `data`).
    Record { saved_chars: f64, requests: f64, input_tokens: f64, cost_usd: f64, mid_run: bool },
    /// A compaction.
    Compaction,
}

/// The status-bar text in two parts: `saved` is shown in the theme's success
/// colour, `rest` dimmed. `text` is both together.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusText {
    pub text: String,
    pub saved: String,
    pub rest: String,
}

/// What the rules read of a message: whether it is a user prompt or a tool
/// result, the start of the text the model reads, and its size.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Seen<'a> {
    pub role: Role,
    /// Its first text block (the head of a measured one), or a string
    /// content; `None` without text. The text blocks join with a newline, so
    /// for a one-line prefix, the text starts with it when this does.
    pub text: Option<Head<'a>>,
    /// [`message_chars`]: texts by length, images by pixels.
    pub chars: usize,
}

/// The start of a text: UTF-8 when read from JSON, UTF-16 code units (as
/// little-endian byte pairs) when read from the columns, which carry them as
/// JavaScript holds them so that nothing is encoded or validated per redraw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Head<'a> {
    Utf8(&'a str),
    Utf16(&'a [u8]),
}

impl Head<'_> {
    pub fn starts_with(self, prefix: &str) -> bool {
        match self {
            Head::Utf8(text) => text.starts_with(prefix),
            // The rules' prefixes are ASCII: one unit a byte, its high byte 0.
            Head::Utf16(bytes) if prefix.is_ascii() => {
                bytes.len() >= 2 * prefix.len()
                    && prefix.bytes().enumerate().all(|(i, b)| bytes[2 * i] == b && bytes[2 * i + 1] == 0)
            }
            Head::Utf16(bytes) => {
                let mut units = bytes.chunks_exact(2).map(|pair| u16::from_le_bytes([pair[0], pair[1]]));
                prefix.encode_utf16().all(|unit| units.next() == Some(unit))
            }
        }
    }
}

/// The roles the rules tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    User,
    ToolResult,
    #[default]
    Other,
}

/// An edited entry as the rules read it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Edited<'a> {
    /// How many messages the model sees of it (0: omitted).
    pub visible: usize,
    /// The one it sees, when it sees exactly one.
    pub seen: Option<Seen<'a>>,
    /// The raw message.
    pub raw: Seen<'a>,
}

impl<'a> Seen<'a> {
    pub fn of(message: &'a Message) -> Seen<'a> {
        let (role, text) = match message {
            Message::User { content } => (Role::User, first_text(content)),
            Message::ToolResult { content, .. } => (Role::ToolResult, first_block_text(content)),
            Message::Custom { content, .. } => (Role::Other, first_text(content)),
            Message::Assistant { content, .. } => (Role::Other, first_block_text(content)),
            _ => (Role::Other, None),
        };
        Seen { role, text, chars: message_chars(message) }
    }

    fn starts_with(&self, prefix: &str) -> bool {
        self.text.is_some_and(|head| head.starts_with(prefix))
    }
}

impl<'a> Edited<'a> {
    pub fn of(entry: &'a ContextEntry) -> Edited<'a> {
        Edited {
            visible: entry.messages.len(),
            seen: match entry.messages.as_slice() {
                [one] => Some(Seen::of(one)),
                _ => None,
            },
            raw: entry.raw.as_ref().map(Seen::of).unwrap_or_default(),
        }
    }
}

fn first_text(content: &Content) -> Option<Head<'_>> {
    match content {
        Content::Text(text) => Some(Head::Utf8(text)),
        Content::Blocks(blocks) => first_block_text(blocks),
    }
}

fn first_block_text(blocks: &[Block]) -> Option<Head<'_>> {
    blocks.iter().find_map(|b| match b {
        Block::Text { text } | Block::Measured { head: text, .. } => Some(Head::Utf8(text)),
        _ => None,
    })
}

/// The savings and usage on the branch.
pub fn stats(input: &StatsInput) -> Stats {
    let edited: Vec<Edited> = input.edited.iter().map(Edited::of).collect();
    tally(&edited, &input.marks)
}

/// The module's savings rules over the edited entries (in order) and the marks.
pub fn tally(edited: &[Edited], marks: &[Mark]) -> Stats {
    let mut out = Stats::default();
    let mut edited = edited.iter().peekable();
    while let Some(entry) = edited.next() {
        if let Some(saved) = saved_by_note(entry) {
            out.saved_chars = out.saved_chars.saturating_add(saved);
            out.items += 1;
        } else if let Some(stub) = exchange_stub(entry) {
            // An omitted exchange: its prompt's raw size and every entry after
            // it the model no longer sees (Pi keeps those with no messages),
            // minus the stub.
            let mut raw = entry.raw.chars;
            while let Some(next) = edited.next_if(|e| e.visible == 0) {
                raw = raw.saturating_add(next.raw.chars);
            }
            out.saved_chars = out.saved_chars.saturating_add(raw.saturating_sub(stub));
            out.items += 1;
        }
    }
    let mut saved_before = false;
    for mark in marks {
        match mark {
            Mark::Record { saved_chars, requests, input_tokens, cost_usd, mid_run } => {
                let saved = whole(*saved_chars);
                out.lifetime_chars = out.lifetime_chars.saturating_add(saved);
                saved_before |= saved > 0;
                if *mid_run {
                    out.checkpoints += 1;
                } else {
                    out.runs += 1;
                }
                out.requests = out.requests.saturating_add(whole(*requests));
                out.input_tokens += finite(*input_tokens);
                out.cost_usd += finite(*cost_usd);
            }
            Mark::Compaction => out.compacted |= saved_before,
        }
    }
    out
}

/// What an edited tool result keeps out: raw size − visible size, when what
/// the model sees is a guard note and the raw output is not one.
fn saved_by_note(entry: &Edited) -> Option<usize> {
    let (Some(visible), raw) = (entry.seen, entry.raw) else { return None };
    (visible.role == Role::ToolResult
        && raw.role == Role::ToolResult
        && visible.starts_with(MARK)
        && !raw.starts_with(MARK))
    .then(|| raw.chars.saturating_sub(visible.chars))
}

/// The stub's size when this entry is a prompt showing the exchange stub
/// while its raw message is not one.
fn exchange_stub(entry: &Edited) -> Option<usize> {
    let (Some(visible), raw) = (entry.seen, entry.raw) else { return None };
    (visible.role == Role::User && raw.role == Role::User && visible.starts_with(STUB_PREFIX) && !raw.starts_with(MARK))
        .then_some(visible.chars)
}

/// The status texts for a guard that is on and ready (the original guard's,
/// with units since issue 28): `🛡 0 saved`, `🛡 −4.2k tok · 1 item`, and after a
/// compaction dropped earlier edits `🛡 0 · Σ−79k tok` or `🛡 −4.2k tok ·
/// 3 items · Σ−83k tok` (Σ, all the session kept out, only when it is larger).
/// Tokens are characters ÷ 4, Pi's estimate. `money` is the bill's two words
/// (`kept::Bill::short`, `saved $0.27`), empty without prices: where given,
/// they stand in place of the items (`🛡 −25k tok · saved $0.27`).
pub fn status_text(stats: &Stats, money: &str) -> StatusText {
    let tokens = |chars: usize| status_count(chars.div_ceil(4));
    let sigma = if stats.compacted && stats.lifetime_chars > stats.saved_chars {
        format!(" · Σ−{} tok", tokens(stats.lifetime_chars))
    } else {
        String::new()
    };
    let (saved, items) = match stats.items {
        0 if sigma.is_empty() => ("0 saved".to_string(), String::new()),
        0 => ("0".to_string(), String::new()),
        1 => (format!("−{} tok", tokens(stats.saved_chars)), " · 1 item".to_string()),
        n => (format!("−{} tok", tokens(stats.saved_chars)), format!(" · {n} items")),
    };
    let rest =
        if money.is_empty() || items.is_empty() { format!("{items}{sigma}") } else { format!(" · {money}{sigma}") };
    StatusText { text: format!("🛡 {saved}{rest}"), saved: format!("🛡 {saved}"), rest }
}

/// Tokens as the status bar shows them: `950`, `4.2k`, and whole thousands
/// from 10k on (`79k`), as the original guard showed them.
fn status_count(tokens: usize) -> String {
    if (10_000..1_000_000).contains(&tokens) {
        format!("{}k", (tokens + 500) / 1000)
    } else {
        short_count(tokens)
    }
}

fn whole(n: f64) -> usize {
    if n.is_finite() && n > 0.0 {
        n.min(usize::MAX as f64) as usize
    } else {
        0
    }
}

fn finite(n: f64) -> f64 {
    if n.is_finite() && n > 0.0 {
        n
    } else {
        0.0
    }
}

/// `{ stats, status }` as JSON text, from the columns the status bar packs
/// (see [`columns`]).
/// `money`: the bill's two words for the status bar, or empty ([`status_text`]).
pub fn columns_json(
    shape: &[u32],
    heads: &[u8],
    marks: &[f64],
    money: &str,
    image: impl FnMut(usize, usize) -> String,
) -> String {
    let (edited, marks) = columns::read(shape, heads, marks, image);
    figures_json(&tally(&edited, &marks), money)
}

fn figures_json(stats: &Stats, money: &str) -> String {
    let status = status_text(stats, money);
    // A struct, not `json!`: that would pull serde_json's value serializer into the wasm.
    #[derive(Serialize)]
    struct Out<'a> {
        stats: &'a Stats,
        status: &'a StatusText,
    }
    serde_json::to_string(&Out { stats, status: &status }).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::Value;

    fn edited(raw: &str, visible: &str) -> ContextEntry {
        ContextEntry::from_value(json!({
            "id": "e1", "entryType": "message",
            "messages": [{"role": "toolResult", "toolName": "bash", "content": [{"type": "text", "text": visible}]}],
            "raw": {"role": "toolResult", "toolName": "bash", "content": [{"type": "text", "text": raw}]}
        }))
    }

    fn record(saved: f64) -> Mark {
        Mark::Record { saved_chars: saved, requests: 2.0, input_tokens: 100.0, cost_usd: 0.001, mid_run: false }
    }

    #[test]
    fn counts_guard_notes_only() {
        let input = StatsInput {
            edited: vec![
                edited(&"x".repeat(10_000), "[context-guard] Distilled … kept"),
                // Another extension's edit: not ours.
                edited(&"y".repeat(5_000), "shortened by someone else"),
                // Already a note in the raw entry: nothing saved by us.
                edited("[context-guard] raw note", "[context-guard] x"),
            ],
            marks: vec![record(9_968.0)],
        };
        let s = stats(&input);
        assert_eq!(s.items, 1);
        assert_eq!(s.saved_chars, 10_000 - "[context-guard] Distilled … kept".chars().count());
        assert_eq!(s.lifetime_chars, 9_968);
        assert_eq!((s.runs, s.requests), (1, 2));
        assert!(!s.compacted);
    }

    #[test]
    fn status_texts_follow_the_reference() {
        let mut s = Stats::default();
        assert_eq!(status_text(&s, "").text, "🛡 0 saved");
        assert_eq!(status_text(&s, "saved $0.27").text, "🛡 0 saved", "no edit: no dollars");
        s.compacted = true;
        s.lifetime_chars = 316_000;
        assert_eq!(status_text(&s, "").text, "🛡 0 · Σ−79k tok");
        s.items = 3;
        s.saved_chars = 16_800;
        let t = status_text(&s, "");
        assert_eq!(t.text, "🛡 −4.2k tok · 3 items · Σ−79k tok");
        assert_eq!((t.saved.as_str(), t.rest.as_str()), ("🛡 −4.2k tok", " · 3 items · Σ−79k tok"));
        s.compacted = false;
        assert_eq!(status_text(&s, "").text, "🛡 −4.2k tok · 3 items");
        let priced = status_text(&s, "saved $0.27");
        assert_eq!((priced.text.as_str(), priced.rest.as_str()), ("🛡 −4.2k tok · saved $0.27", " · saved $0.27"));
        s.items = 1;
        assert_eq!(status_text(&s, "").text, "🛡 −4.2k tok · 1 item");
        s.compacted = true;
        assert_eq!(status_text(&s, "cost $0.01").text, "🛡 −4.2k tok · cost $0.01 · Σ−79k tok");
    }

    #[test]
    fn compacted_only_after_a_record_that_saved() {
        let s = stats(&StatsInput { edited: vec![], marks: vec![Mark::Compaction, record(0.0), record(400.0)] });
        assert!(!s.compacted);
        let s = stats(&StatsInput { edited: vec![], marks: vec![record(400.0), Mark::Compaction] });
        assert!(s.compacted);
    }

    #[test]
    fn an_omitted_exchange_counts_its_raw_size_minus_the_stub() {
        let stub = "[context-guard] Omitted an earlier exchange judged unrelated: \"日本😀\"";
        let prompt = ContextEntry::from_value(json!({
            "id": "u", "entryType": "message",
            "messages": [{"role": "user", "content": [{"type": "text", "text": stub}]}],
            "raw": {"role": "user", "content": "日本😀 question"}
        }));
        let omitted = |id: &str, raw: Value| {
            ContextEntry::from_value(json!({"id": id, "entryType": "message", "messages": [], "raw": raw}))
        };
        let input = StatsInput {
            edited: vec![
                prompt,
                omitted("a", json!({"role": "assistant", "content": [{"type": "text", "text": "x".repeat(3000)}]})),
                omitted("r", json!({"role": "toolResult", "content": [{"type": "text", "text": "y".repeat(2000)}]})),
                edited(&"z".repeat(1000), "[context-guard] Omitted the output"),
            ],
            marks: vec![],
        };
        let s = stats(&input);
        assert_eq!(s.items, 2);
        let prompt_chars = crate::text::js_len("日本😀 question");
        let stub_chars = crate::text::js_len(stub);
        let note = crate::text::js_len("[context-guard] Omitted the output");
        assert_eq!(s.saved_chars, prompt_chars + 5000 - stub_chars + 1000 - note);
    }

    #[test]
    fn a_utf16_head_starts_with_what_its_text_does() {
        let utf16 = |t: &str| t.encode_utf16().flat_map(u16::to_le_bytes).collect::<Vec<u8>>();
        for (text, prefix) in [
            ("[context-guard] x", MARK),
            ("[context-guard", MARK),
            ("", MARK),
            ("日本😀 question", "日本😀"),
            ("日本😀 question", "日本😁"),
            ("[context-guard] Omitted an earlier exchange judged", STUB_PREFIX),
            ("\u{15b}context-guard]", MARK),
        ] {
            assert_eq!(Head::Utf16(&utf16(text)).starts_with(prefix), text.starts_with(prefix), "{text:?} {prefix:?}");
        }
        // An odd byte count (a cut unit) never matches past it.
        assert!(!Head::Utf16(&utf16("[c")[..3]).starts_with("[c"));
    }

    #[test]
    fn measured_texts_count_by_their_length() {
        let e = ContextEntry::from_value(json!({
            "id": "e", "entryType": "message",
            "messages": [{"role": "toolResult", "content": [{"type": "text", "text": "[context-guard] Distilled", "chars": 900}]}],
            "raw": {"role": "toolResult", "content": [{"type": "text", "text": "line 1 日本", "chars": 50_000}]}
        }));
        let s = stats(&StatsInput { edited: vec![e], marks: vec![] });
        assert_eq!((s.items, s.saved_chars), (1, 49_100));
        // A long exchange stub, measured, still reads as one by its head.
        let stub = ContextEntry::from_value(json!({
            "id": "u", "entryType": "message",
            "messages": [{"role": "user", "content": [{"type": "text", "text": format!("{STUB_PREFIX} judged"), "chars": 300}]}],
            "raw": {"role": "user", "content": [{"type": "text", "text": "question", "chars": 5_000}]}
        }));
        let s = stats(&StatsInput { edited: vec![stub], marks: vec![] });
        assert_eq!((s.items, s.saved_chars), (1, 4_700));
    }
}
