//! Pi's projected session entries, as the core reads them.
//!
//! For: the plain data the extension hands over from
//! `event.context.contextEntries` (or `buildSessionProjection().entries`):
//! each entry's id, its type, the messages the model sees, and the raw message
//! where an edit changed it. Not for: deciding anything about them (that is
//! `run`, and later `items` and `checkpoint`).
//!
//! Only the fields the core reads are declared; everything else Pi sends is
//! ignored, and unknown roles and block types are kept as `Other` so a newer
//! Pi does not break the pass. A field that is missing or of the wrong type
//! reads as empty: messages are read from a JSON value by hand, not by derived
//! code, which is both more forgiving and much smaller in the wasm (derived
//! code for tagged enums buffers through serde's generic content tree and is
//! instantiated for every deserializer).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::read::Fields;

/// One projected session entry (`ProjectedSessionEntry` in Pi).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextEntry {
    /// `sourceEntry.id`.
    pub id: String,
    /// `sourceEntry.type`: `message`, `compaction`, `branch_summary`, `custom_message`, …
    #[serde(default)]
    pub entry_type: String,
    /// The model-visible messages after context edits. Empty for state-only
    /// entries and for omitted ones.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// The raw `sourceEntry.message` when a context edit changed what the model
    /// sees (the extension can tell by identity: `messages[0] !== sourceEntry.message`).
    /// Absent means the messages are the raw entry's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Message>,
}

/// A message, by role. Roles the core does not read become `Other`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role")]
pub enum Message {
    #[serde(rename = "user")]
    User {
        #[serde(default)]
        content: Content,
    },
    #[serde(rename = "assistant", rename_all = "camelCase")]
    Assistant {
        #[serde(default)]
        content: Vec<Block>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<String>,
    },
    #[serde(rename = "toolResult", rename_all = "camelCase")]
    ToolResult {
        #[serde(default)]
        tool_call_id: String,
        #[serde(default)]
        tool_name: String,
        #[serde(default)]
        content: Vec<Block>,
        #[serde(default)]
        is_error: bool,
    },
    /// A custom message of an extension (subagent notices and the like).
    #[serde(rename = "custom", rename_all = "camelCase")]
    Custom {
        #[serde(default)]
        custom_type: String,
        #[serde(default)]
        content: Content,
    },
    #[serde(rename = "compactionSummary")]
    CompactionSummary {
        #[serde(default)]
        summary: String,
    },
    #[serde(rename = "branchSummary")]
    BranchSummary {
        #[serde(default)]
        summary: String,
    },
    /// A `!` shell command the user ran (Pi sends it as a user message;
    /// `!!` sets `excludeFromContext`, and Pi then leaves it out).
    #[serde(rename = "bashExecution", rename_all = "camelCase")]
    BashExecution {
        #[serde(default)]
        command: String,
        #[serde(default)]
        output: String,
        #[serde(default)]
        exclude_from_context: bool,
    },
    #[serde(other)]
    Other,
}

/// User and custom message content: a plain string or blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Blocks(Vec<Block>),
}

impl Default for Content {
    fn default() -> Self {
        Content::Blocks(Vec::new())
    }
}

/// A content block. Anything newer becomes `Other`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum Block {
    #[serde(rename = "text")]
    Text {
        #[serde(default)]
        text: String,
    },
    /// Only the start of `data` is read (the image header, see `size`), so the
    /// extension may pass the first few kilobytes of it.
    #[serde(rename = "image", rename_all = "camelCase")]
    Image {
        #[serde(default)]
        data: String,
        #[serde(default)]
        mime_type: String,
    },
    /// A long text block the extension measured instead of sending (the
    /// savings need only its size and its start): `{ type: "text", text:
    /// <head>, chars: <JavaScript length> }`. Never in a pass input.
    #[serde(rename = "text")]
    Measured { head: String, chars: usize },
    #[serde(rename = "toolCall")]
    ToolCall {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        arguments: Value,
    },
    /// An assistant's thinking; only its size is read (`size`).
    #[serde(rename = "thinking")]
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default, rename = "thinkingSignature")]
        signature: String,
    },
    #[serde(other)]
    Other,
}

fn take_str(o: &mut Map<String, Value>, key: &str) -> String {
    match o.get_mut(key).map(Value::take) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

fn take_blocks(o: &mut Map<String, Value>, key: &str) -> Vec<Block> {
    match o.get_mut(key).map(Value::take) {
        Some(Value::Array(items)) => items.into_iter().map(Block::from_value).collect(),
        _ => Vec::new(),
    }
}

fn take_content(o: &mut Map<String, Value>) -> Content {
    match o.get_mut("content").map(Value::take) {
        Some(Value::String(s)) => Content::Text(s),
        Some(Value::Array(items)) => Content::Blocks(items.into_iter().map(Block::from_value).collect()),
        _ => Content::default(),
    }
}

impl Message {
    /// Reads a message from Pi's JSON shape; anything unexpected reads as
    /// empty or `Other`, never as an error.
    pub fn from_value(v: Value) -> Message {
        let Value::Object(mut o) = v else { return Message::Other };
        match o.get("role").and_then(Value::as_str).unwrap_or("") {
            "user" => Message::User { content: take_content(&mut o) },
            "assistant" => Message::Assistant {
                content: take_blocks(&mut o, "content"),
                stop_reason: o.get("stopReason").and_then(Value::as_str).map(str::to_string),
            },
            "toolResult" => Message::ToolResult {
                tool_call_id: take_str(&mut o, "toolCallId"),
                tool_name: take_str(&mut o, "toolName"),
                content: take_blocks(&mut o, "content"),
                is_error: o.get("isError").and_then(Value::as_bool).unwrap_or(false),
            },
            "custom" => Message::Custom { custom_type: take_str(&mut o, "customType"), content: take_content(&mut o) },
            "compactionSummary" => Message::CompactionSummary { summary: take_str(&mut o, "summary") },
            "branchSummary" => Message::BranchSummary { summary: take_str(&mut o, "summary") },
            "bashExecution" => Message::BashExecution {
                command: take_str(&mut o, "command"),
                output: take_str(&mut o, "output"),
                exclude_from_context: o.get("excludeFromContext").and_then(Value::as_bool).unwrap_or(false),
            },
            _ => Message::Other,
        }
    }
}

impl Block {
    /// Reads a content block from Pi's JSON shape (see [`Message::from_value`]).
    pub fn from_value(v: Value) -> Block {
        let Value::Object(mut o) = v else { return Block::Other };
        match o.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => match o.get("chars").and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok()) {
                Some(chars) => Block::Measured { head: take_str(&mut o, "text"), chars },
                None => Block::Text { text: take_str(&mut o, "text") },
            },
            "image" => Block::Image { data: take_str(&mut o, "data"), mime_type: take_str(&mut o, "mimeType") },
            "toolCall" => Block::ToolCall {
                id: take_str(&mut o, "id"),
                name: take_str(&mut o, "name"),
                arguments: o.get_mut("arguments").map(Value::take).unwrap_or(Value::Null),
            },
            "thinking" => Block::Thinking {
                thinking: take_str(&mut o, "thinking"),
                signature: take_str(&mut o, "thinkingSignature"),
            },
            _ => Block::Other,
        }
    }
}

impl ContextEntry {
    /// The assistant messages it holds: the main model's replies, one a request (a turn of a run).
    pub fn replies(&self) -> usize {
        self.messages.iter().filter(|m| matches!(m, Message::Assistant { .. })).count()
    }

    pub fn from_value(v: Value) -> ContextEntry {
        let mut f = Fields::of(v);
        let raw = match f.take("raw") {
            Value::Null => None,
            raw => Some(Message::from_value(raw)),
        };
        ContextEntry {
            id: f.string("id"),
            entry_type: f.string("entryType"),
            messages: f.list("messages", Message::from_value),
            raw,
        }
    }
}

crate::deserialize_via_value!(ContextEntry, Message, Block);

/// Puts out-of-line texts back into a JSON array of entries (the pass's
/// input form, see `pass::plan_json`): a text block of a message or of `raw`
/// may come as `{"type": "text", "textAt": k}` for `texts[k]`, so a megabyte
/// of tool output crosses beside the JSON instead of inside it. An index out
/// of range reads as empty text.
pub fn restore_texts(entries: &mut Value, texts: &[&str]) {
    let Value::Array(entries) = entries else { return };
    for entry in entries.iter_mut().filter_map(Value::as_object_mut) {
        for (key, value) in entry.iter_mut() {
            match (key.as_str(), value) {
                ("messages", Value::Array(messages)) => messages.iter_mut().for_each(|m| restore_message(m, texts)),
                ("raw", raw) => restore_message(raw, texts),
                _ => {}
            }
        }
    }
}

fn restore_message(message: &mut Value, texts: &[&str]) {
    let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) else { return };
    for block in blocks.iter_mut().filter_map(Value::as_object_mut) {
        if let Some(at) = block.get_mut("textAt").map(Value::take) {
            let text = at.as_u64().and_then(|k| texts.get(usize::try_from(k).ok()?)).copied();
            block.insert("text".to_string(), Value::String(text.unwrap_or("").to_string()));
        }
    }
}

/// The text of blocks as the model reads it: text blocks joined by a newline.
pub fn blocks_text(blocks: &[Block]) -> String {
    let mut out = String::new();
    let mut first = true;
    for b in blocks {
        if let Block::Text { text } = b {
            if !first {
                out.push('\n');
            }
            out.push_str(text);
            first = false;
        }
    }
    out
}

impl Content {
    /// Its text: the string, or the text blocks joined by a newline.
    pub fn text(&self) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Blocks(b) => blocks_text(b),
        }
    }

    pub fn has_images(&self) -> bool {
        matches!(self, Content::Blocks(b) if b.iter().any(|b| matches!(b, Block::Image { .. })))
    }
}

impl Message {
    pub fn is_user(&self) -> bool {
        matches!(self, Message::User { .. })
    }

    /// An assistant message that asked for tools (its turn is not over).
    pub fn has_tool_calls(&self) -> bool {
        matches!(self, Message::Assistant { content, .. } if content.iter().any(|b| matches!(b, Block::ToolCall { .. })))
    }

    /// The text of an assistant message (empty for other roles).
    pub fn assistant_text(&self) -> String {
        match self {
            Message::Assistant { content, .. } => blocks_text(content),
            _ => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pi_messages_and_ignores_the_rest() {
        let json = r#"[
          {"role":"user","content":"hi","timestamp":1},
          {"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"x","mimeType":"image/png"}]},
          {"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"s"},
             {"type":"text","text":"ok"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}],
           "stopReason":"toolUse","usage":{"input":1}},
          {"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"out"}],"isError":false},
          {"role":"bashExecution","command":"ls","output":"x"},
          {"role":"compactionSummary","summary":"s","tokensBefore":5}
        ]"#;
        let messages: Vec<Message> = serde_json::from_str(json).unwrap();
        assert_eq!(messages.len(), 6);
        assert!(matches!(&messages[0], Message::User { content: Content::Text(t) } if t == "hi"));
        assert!(matches!(&messages[1], Message::User { content } if content.has_images() && content.text() == "a"));
        assert!(messages[2].has_tool_calls());
        assert_eq!(messages[2].assistant_text(), "ok");
        assert!(matches!(&messages[3], Message::ToolResult { tool_name, .. } if tool_name == "bash"));
        assert!(matches!(&messages[2], Message::Assistant { content, .. }
            if content[0] == Block::Thinking { thinking: "t".into(), signature: "s".into() }));
        assert_eq!(
            messages[4],
            Message::BashExecution { command: "ls".into(), output: "x".into(), exclude_from_context: false }
        );
        assert!(matches!(&messages[5], Message::CompactionSummary { summary } if summary == "s"));
    }

    #[test]
    fn odd_shapes_read_as_empty_not_as_errors() {
        let json = r#"[
          {"role":"toolResult","toolCallId":5,"content":"not blocks","isError":"yes"},
          {"role":"user","content":[{"type":"text","text":7},{"nope":1},3]},
          {"role":42}, "a string", null,
          {"role":"bashExecution","command":3,"excludeFromContext":"yes"},
          {"role":"assistant","content":[{"type":"thinking","thinking":["t"]},{"type":"redacted"}]},
          {"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash"}]}
        ]"#;
        let messages: Vec<Message> = serde_json::from_str(json).unwrap();
        assert_eq!(
            messages[0],
            Message::ToolResult {
                tool_call_id: String::new(),
                tool_name: String::new(),
                content: vec![],
                is_error: false
            }
        );
        assert_eq!(
            messages[1],
            Message::User {
                content: Content::Blocks(vec![Block::Text { text: String::new() }, Block::Other, Block::Other])
            }
        );
        assert_eq!(messages[2..5], [Message::Other, Message::Other, Message::Other]);
        assert_eq!(
            messages[5],
            Message::BashExecution { command: String::new(), output: String::new(), exclude_from_context: false }
        );
        assert_eq!(
            messages[6],
            Message::Assistant {
                content: vec![Block::Thinking { thinking: String::new(), signature: String::new() }, Block::Other],
                stop_reason: None
            }
        );
        assert!(messages[7].has_tool_calls());
        // An entry with a wrong-typed message list has no messages.
        let e: ContextEntry = serde_json::from_str(r#"{"id":"x","messages":5,"raw":null}"#).unwrap();
        assert_eq!(e, ContextEntry { id: "x".into(), ..ContextEntry::default() });
    }

    #[test]
    fn text_blocks_join_with_a_newline() {
        let blocks = vec![
            Block::Text { text: "a".into() },
            Block::Image { data: String::new(), mime_type: String::new() },
            Block::Text { text: "b".into() },
        ];
        assert_eq!(blocks_text(&blocks), "a\nb");
    }
}
