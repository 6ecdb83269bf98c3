//! Pi's projected session entries, as the core reads them.
//!
//! For: the plain data the extension hands over from
//! `event.context.contextEntries` (or `buildSessionProjection().entries`):
//! each entry's id, its type, the messages the model sees, and the raw message
//! where an edit changed it. Not for: deciding anything about them (that is
//! `span`, and later `items` and `checkpoint`).
//!
//! Only the fields the core reads are declared; everything else Pi sends is
//! ignored, and unknown roles and block types are kept as `Other` so a newer
//! Pi does not break the pass. Fields that can be missing default to empty.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One projected session entry (`ProjectedSessionEntry` in Pi).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(other)]
    Other,
}

/// User and custom message content: a plain string or blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// A content block. Thinking and anything newer become `Other`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(rename = "toolCall")]
    ToolCall {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        arguments: Value,
    },
    #[serde(other)]
    Other,
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
        assert_eq!(messages[4], Message::Other);
        assert!(matches!(&messages[5], Message::CompactionSummary { summary } if summary == "s"));
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
