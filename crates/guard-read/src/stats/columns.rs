//! The statistics' input as columns: how the status bar's recomputation
//! crosses the boundary at every redraw.
//!
//! For: turning what the extension packs (`extension/guard/figures.ts`) into
//! the [`Edited`] entries the rules read (each message's role, the start of
//! its text and its size by `size`), borrowing the texts' heads and reading
//! images only as far as their dimensions need. Not for: any rule; the
//! extension packs every edited message as Pi holds it, and this reads it the
//! way `Message::from_value` reads JSON.
//!
//! Why columns: as JSON, the 5,000-entry benchmark spent ~4.5 ms building one
//! object per edited entry, stringifying it and parsing it here, for sums that
//! take microseconds; as columns the whole recomputation takes ~0.27 ms
//! (`tests/bench/savings.bench.ts`). The shape of the edited messages crosses
//! as one `Uint32Array`; their texts' heads as one run of UTF-16 code units
//! (little-endian bytes: Node writes a string that way in one native copy,
//! where UTF-8 cost an encoding there and a validation and a walk to every
//! head's end here, ~0.06 ms more); the records as one `Float64Array`; and an
//! image's base64 through a callback that hands over a prefix (a kilobyte for
//! most images, where the JSON carried 96 KB of every image each redraw).
//!
//! The shape is a sequence of numbers, read in order:
//!
//! - an edited entry: the count of its visible messages, then those messages,
//!   then its raw message;
//! - a message: its role ([`role`]), the form of its content ([`form`]) and
//!   the count of items that follow (1 for a string); a `bashExecution`
//!   message: `BASH_EXECUTION`, `SHELL` (or `SHELL_EXCLUDED` for
//!   `excludeFromContext`), 2, and its command and output as `TEXT` items
//!   with empty heads;
//! - an item ([`item`]): `TEXT`, its JavaScript length and its head's (the
//!   head, next in `heads`, is the whole text when short, else its start);
//!   `IMAGE` (the callback's next image); `TOOL_CALL`, the JavaScript lengths
//!   of its name and of its arguments' JSON (both next in `heads`);
//!   `THINKING`, the JavaScript lengths of its text and its signature (the
//!   size model reads no more of it); `OTHER`.
//!
//! A mark is six numbers: its [`mark`] code, then a record's `savedChars`,
//! `requests`, `inputTokens`, `costUsd` (NaN where the record has no number)
//! and 1 for a mid-run checkpoint. Short or odd columns read as less, never
//! as an error.

use serde_json::Value;

use super::{Edited, Head, Mark, Role, Seen};
use crate::entry::Block;
use crate::size::{block_chars, image_head, thinking_chars};

/// Message roles. Summaries and anything newer are `OTHER`: Pi never stores
/// them as a message entry's own message, and the rules read none of them.
pub mod role {
    pub const OTHER: u32 = 0;
    pub const USER: u32 = 1;
    pub const ASSISTANT: u32 = 2;
    pub const TOOL_RESULT: u32 = 3;
    pub const CUSTOM: u32 = 4;
    pub const BASH_EXECUTION: u32 = 5;
}

/// The form of a message's `content`.
pub mod form {
    /// A string: one `TEXT` item follows.
    pub const STRING: u32 = 0;
    /// An array: one item a block.
    pub const BLOCKS: u32 = 1;
    /// Missing or anything else.
    pub const NONE: u32 = 2;
    /// A `bashExecution` message's command and output: two `TEXT` items.
    pub const SHELL: u32 = 3;
    /// The same, kept from the model by `excludeFromContext` (`!!`).
    pub const SHELL_EXCLUDED: u32 = 4;
}

/// Content blocks.
pub mod item {
    pub const OTHER: u32 = 0;
    pub const TEXT: u32 = 1;
    pub const IMAGE: u32 = 2;
    pub const TOOL_CALL: u32 = 3;
    pub const THINKING: u32 = 4;
}

/// Branch entries the lifetime total reads.
pub mod mark {
    pub const COMPACTION: u32 = 1;
    pub const RECORD: u32 = 2;
    /// Numbers a mark takes in the marks column.
    pub const STRIDE: usize = 6;
}

/// The edited entries and the marks, from the columns. `image(index, chars)`
/// gives the first `chars` characters of the `index`-th image's base64 data
/// (all of it when shorter; anything else reads as no data). It is asked only
/// for images in the messages the rules read, and only as far as their
/// dimensions need (`size::image_head`).
pub fn read<'a>(
    shape: &[u32],
    heads: &'a [u8],
    marks: &[f64],
    image: impl FnMut(usize, usize) -> String,
) -> (Vec<Edited<'a>>, Vec<Mark>) {
    let mut tape = Tape { shape, at: 0, heads, images: 0, image };
    let mut edited = Vec::new();
    while !tape.done() {
        let visible = tape.next() as usize;
        let mut seen = None;
        for _ in 0..visible {
            if tape.done() {
                break;
            }
            // The rules read the visible message only when it is the only one.
            let message = tape.message(visible == 1);
            if visible == 1 {
                seen = Some(message);
            }
        }
        let raw = if tape.done() { Seen::default() } else { tape.message(true) };
        edited.push(Edited { visible, seen, raw });
    }
    let marks = marks
        .chunks_exact(mark::STRIDE)
        .filter_map(|m| match m[0] {
            c if c == f64::from(mark::COMPACTION) => Some(Mark::Compaction),
            c if c == f64::from(mark::RECORD) => Some(Mark::Record {
                saved_chars: m[1],
                requests: m[2],
                input_tokens: m[3],
                cost_usd: m[4],
                mid_run: m[5] == 1.0,
            }),
            _ => None,
        })
        .collect();
    (edited, marks)
}

struct Tape<'a, 's, F> {
    shape: &'s [u32],
    at: usize,
    heads: &'a [u8],
    images: usize,
    image: F,
}

impl<'a, F: FnMut(usize, usize) -> String> Tape<'a, '_, F> {
    fn done(&self) -> bool {
        self.at >= self.shape.len()
    }

    /// The next number; 0 past the end.
    fn next(&mut self) -> u32 {
        let n = self.shape.get(self.at).copied().unwrap_or(0);
        self.at = self.at.saturating_add(1);
        n
    }

    /// The next `units` UTF-16 units of `heads` (fewer past its end).
    fn text(&mut self, units: u32) -> &'a [u8] {
        let end = (units as usize).saturating_mul(2).min(self.heads.len());
        let (taken, rest) = self.heads.split_at(end);
        self.heads = rest;
        taken
    }

    /// A text of `heads` as a string (lone surrogates become U+FFFD).
    fn string(&mut self, units: u32) -> String {
        let units: Vec<u16> =
            self.text(units).chunks_exact(2).map(|pair| u16::from_le_bytes([pair[0], pair[1]])).collect();
        String::from_utf16_lossy(&units)
    }

    /// One message, read the way `Message::from_value` reads JSON: a tool
    /// result's or an assistant message's string content is no content.
    /// `wanted`: false skips images (the rules do not read this message).
    fn message(&mut self, wanted: bool) -> Seen<'a> {
        let role = self.next();
        let form = self.next();
        let count = self.next();
        let content = match role {
            role::USER | role::CUSTOM => form == form::STRING || form == form::BLOCKS,
            role::ASSISTANT | role::TOOL_RESULT => form == form::BLOCKS,
            // Sized by `size::bash_chars`: command and output, nothing when excluded.
            role::BASH_EXECUTION => form == form::SHELL,
            _ => false,
        };
        // The rules read the text of prompts, results and the like, never a command's.
        let has_head = content && role != role::BASH_EXECUTION;
        let wanted = wanted && content;
        let mut seen = Seen {
            role: match role {
                role::USER => Role::User,
                role::TOOL_RESULT => Role::ToolResult,
                _ => Role::Other,
            },
            text: None,
            chars: 0,
        };
        for _ in 0..count {
            if self.done() {
                break;
            }
            let block = match self.next() {
                item::TEXT => {
                    let chars = self.next() as usize;
                    let head_units = self.next();
                    let head = self.text(head_units);
                    if seen.text.is_none() && has_head {
                        seen.text = Some(Head::Utf16(head));
                    }
                    // Its size is its length; the head is in `seen.text`.
                    Block::Measured { head: String::new(), chars }
                }
                item::IMAGE => {
                    let index = self.images;
                    self.images += 1;
                    if !wanted {
                        continue;
                    }
                    let image = &mut self.image;
                    Block::Image { data: image_head(|chars| image(index, chars)), mime_type: String::new() }
                }
                item::TOOL_CALL => {
                    let name_units = self.next();
                    let args_units = self.next();
                    if !wanted {
                        self.text(name_units);
                        self.text(args_units);
                        continue;
                    }
                    let name = self.string(name_units);
                    let arguments = serde_json::from_str(&self.string(args_units)).unwrap_or(Value::Null);
                    Block::ToolCall { id: String::new(), name, arguments }
                }
                item::THINKING => {
                    let thinking = self.next() as usize;
                    let signature = self.next() as usize;
                    Block::Measured { head: String::new(), chars: thinking_chars(thinking, signature) }
                }
                _ => Block::Other,
            };
            if content {
                seen.chars = seen.chars.saturating_add(block_chars(&block));
            }
        }
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::ContextEntry;
    use crate::stats::{stats, tally, StatsInput};
    use crate::text::{js_len, js_prefix};
    use serde_json::json;

    /// The columns of entries given as Pi's JSON, packed the way
    /// `extension/guard/figures.ts` packs them (with a head of 64).
    fn pack(entries: &[(Vec<Value>, Value)]) -> (Vec<u32>, Vec<u8>, Vec<String>) {
        let mut shape = Vec::new();
        let mut heads = Vec::new();
        let mut images = Vec::new();
        let utf16 = |heads: &mut Vec<u8>, t: &str| heads.extend(t.encode_utf16().flat_map(u16::to_le_bytes));
        let text = |shape: &mut Vec<u32>, heads: &mut Vec<u8>, t: &str| {
            let head = js_prefix(t, 64);
            shape.extend([item::TEXT, js_len(t) as u32, js_len(head) as u32]);
            utf16(heads, head);
        };
        for (visible, raw) in entries {
            shape.push(visible.len() as u32);
            for m in visible.iter().chain([raw]) {
                let role = match m["role"].as_str() {
                    Some("user") => role::USER,
                    Some("assistant") => role::ASSISTANT,
                    Some("toolResult") => role::TOOL_RESULT,
                    Some("custom") => role::CUSTOM,
                    Some("bashExecution") => role::BASH_EXECUTION,
                    _ => role::OTHER,
                };
                if role == role::BASH_EXECUTION {
                    let excluded = m["excludeFromContext"] == json!(true);
                    let len = |k: &str| m[k].as_str().map_or(0, js_len) as u32;
                    let form = if excluded { form::SHELL_EXCLUDED } else { form::SHELL };
                    shape.extend([role, form, 2, item::TEXT, len("command"), 0, item::TEXT, len("output"), 0]);
                    continue;
                }
                match &m["content"] {
                    Value::String(s) => {
                        shape.extend([role, form::STRING, 1]);
                        text(&mut shape, &mut heads, s);
                    }
                    Value::Array(blocks) => {
                        shape.extend([role, form::BLOCKS, blocks.len() as u32]);
                        for b in blocks {
                            match b["type"].as_str() {
                                Some("text") => text(&mut shape, &mut heads, b["text"].as_str().unwrap_or("")),
                                Some("image") => {
                                    shape.push(item::IMAGE);
                                    images.push(b["data"].as_str().unwrap_or("").to_string());
                                }
                                Some("thinking") => {
                                    let len = |k: &str| b[k].as_str().map_or(0, js_len) as u32;
                                    shape.extend([item::THINKING, len("thinking"), len("thinkingSignature")]);
                                }
                                Some("toolCall") => {
                                    let name = b["name"].as_str().unwrap_or("");
                                    let args = b["arguments"].to_string();
                                    shape.extend([item::TOOL_CALL, js_len(name) as u32, js_len(&args) as u32]);
                                    utf16(&mut heads, name);
                                    utf16(&mut heads, &args);
                                }
                                _ => shape.push(item::OTHER),
                            }
                        }
                    }
                    _ => shape.extend([role, form::NONE, 0]),
                }
            }
        }
        (shape, heads, images)
    }

    fn figures(entries: &[(Vec<Value>, Value)]) -> (usize, usize) {
        let (shape, heads, images) = pack(entries);
        let (edited, marks) =
            read(&shape, &heads, &[], |i, n| images.get(i).map_or(String::new(), |d| js_prefix(d, n).to_string()));
        let s = tally(&edited, &marks);
        (s.items, s.saved_chars)
    }

    fn as_json(entries: &[(Vec<Value>, Value)]) -> (usize, usize) {
        let edited = entries
            .iter()
            .map(|(visible, raw)| ContextEntry::from_value(json!({"id": "e", "messages": visible, "raw": raw})))
            .collect();
        let s = stats(&StatsInput { edited, marks: vec![] });
        (s.items, s.saved_chars)
    }

    const PNG_1280_960: &str = "iVBORw0KGgoAAAANSUhEUgAABQAAAAPACAIAAAB/fS41AAAAA";

    #[test]
    fn columns_give_the_figures_json_gives() {
        let result = |content: Value| json!({"role": "toolResult", "toolName": "bash", "content": content});
        let long = "line 日本 😀 ".repeat(4000);
        let stub = format!("[context-guard] Omitted an earlier exchange judged unrelated: \"{}\"", "q".repeat(300));
        let entries = vec![
            // A distilled output, measured on both sides.
            (
                vec![result(json!([{"type": "text", "text": format!("[context-guard] Distilled\n{long}")}]))],
                result(json!([{"type": "text", "text": long}])),
            ),
            // An old image removed: counted by pixels, the data read through the callback.
            (
                vec![result(
                    json!([{"type": "text", "text": "[context-guard] Removed 1 image"}, {"type": "text", "text": "ok"}]),
                )],
                result(
                    json!([{"type": "text", "text": "ok"}, {"type": "image", "data": format!("{PNG_1280_960}{}", "A".repeat(200_000))}]),
                ),
            ),
            // Another extension's edit counts nothing.
            (
                vec![result(json!([{"type": "text", "text": "shortened"}]))],
                result(json!([{"type": "text", "text": long}])),
            ),
            // An omitted exchange with a long stub, and the entries after it.
            (
                vec![json!({"role": "user", "content": [{"type": "text", "text": stub}]})],
                json!({"role": "user", "content": format!("question {long}")}),
            ),
            (
                vec![],
                json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}, {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "rg 😀", "n": 1.5}}]}),
            ),
            (vec![], result(json!([{"type": "text", "text": "x".repeat(900)}]))),
            (vec![], json!({"role": "custom", "customType": "note", "content": "short"})),
            // A tool result whose raw is already a note.
            (
                vec![result(json!([{"type": "text", "text": "[context-guard] x"}]))],
                result(json!([{"type": "text", "text": "[context-guard] raw"}])),
            ),
            // Odd shapes.
            (vec![json!({"role": "bashExecution"}), json!(null)], json!({"role": "user"})),
        ];
        let from_columns = figures(&entries);
        assert_eq!(from_columns.0, 3);
        assert_eq!(from_columns, as_json(&entries));
    }

    #[test]
    fn thinking_and_shell_commands_count_by_the_size_model() {
        let stub = "[context-guard] Omitted an earlier exchange judged unrelated: \"question\"";
        let entries = vec![
            (
                vec![json!({"role": "user", "content": [{"type": "text", "text": stub}]})],
                json!({"role": "user", "content": "question"}),
            ),
            (
                vec![],
                json!({"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "t".repeat(300), "thinkingSignature": "s".repeat(101)},
                    {"type": "text", "text": "ok"}]}),
            ),
            (vec![], json!({"role": "bashExecution", "command": "make", "output": "o".repeat(1000), "exitCode": 2})),
            (
                vec![],
                json!({"role": "bashExecution", "command": "env", "output": "x".repeat(700), "excludeFromContext": true}),
            ),
        ];
        // The prompt 8, thinking 300 + 101 / 2 rounded up and "ok" 353, the command and
        // its output 1,004, the `!!` command nothing; minus the stub.
        let expected = 8 + 353 + 1004 - js_len(stub);
        assert_eq!(figures(&entries), (1, expected));
        assert_eq!(as_json(&entries), (1, expected));
    }

    #[test]
    fn short_and_odd_columns_read_as_less() {
        let none = |_: usize, _: usize| String::new();
        assert_eq!(read(&[], b"", &[], none), (vec![], vec![]));
        // Counts far beyond the columns stop at their end.
        let (edited, _) =
            read(&[u32::MAX, role::USER, form::BLOCKS, u32::MAX, item::TEXT, u32::MAX, u32::MAX], b"a\0b", &[], none);
        assert_eq!(edited.len(), 1);
        assert_eq!(edited[0].raw, Seen::default());
        let (edited, marks) = read(&[0, 9, 9, 9, 7, 7], b"x", &[2.0, 1.0, f64::NAN, 3.0, 4.0, 1.0, 1.0, 0.0], none);
        assert_eq!(edited.len(), 1);
        assert_eq!(marks.len(), 1);
        assert!(matches!(marks[0], Mark::Record { mid_run: true, .. }));
    }
}
