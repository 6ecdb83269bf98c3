//! Builders of entries for tests: a message of each role, a tool call and
//! its result, and an image as a tool returns it.
//!
//! For: the tests of every module (and of the crates above) that need a
//! branch to work on. Not for: anything but tests; it is compiled only for them.

use serde_json::Value;

use crate::entry::{Block, Content, ContextEntry, Message};

pub fn entry(id: &str, message: Message) -> ContextEntry {
    ContextEntry { id: id.into(), entry_type: "message".into(), messages: vec![message], raw: None }
}
pub fn user(text: &str) -> Message {
    Message::User { content: Content::Text(text.into()) }
}
pub fn say(text: &str) -> Message {
    Message::Assistant { content: vec![Block::Text { text: text.into() }], stop_reason: None }
}
pub fn call(id: &str, name: &str, args: Value) -> Message {
    Message::Assistant {
        content: vec![Block::ToolCall { id: id.into(), name: name.into(), arguments: args }],
        stop_reason: None,
    }
}
pub fn result(id: &str, name: &str, text: &str) -> Message {
    Message::ToolResult {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content: vec![Block::Text { text: text.into() }],
        is_error: false,
    }
}

/// A base64 PNG header of the given size.
pub fn png_b64(w: u32, h: u32) -> String {
    let mut v = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, b'I', b'H', b'D', b'R'];
    v.extend_from_slice(&w.to_be_bytes());
    v.extend_from_slice(&h.to_be_bytes());
    v.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in v.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            s.push(if i <= c.len() { T[((n >> (18 - 6 * i)) & 63) as usize] as char } else { '=' });
        }
    }
    s
}

/// A `read` result with a text and one PNG image.
pub fn shot(id: &str, text: &str, data: &str) -> ContextEntry {
    entry(
        id,
        Message::ToolResult {
            tool_call_id: format!("c-{id}"),
            tool_name: "read".into(),
            content: vec![
                Block::Text { text: text.into() },
                Block::Image { data: data.into(), mime_type: "image/png".into() },
            ],
            is_error: false,
        },
    )
}
