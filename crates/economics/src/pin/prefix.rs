//! An Anthropic Messages body as the prompt cache sees it: one sequence of
//! blocks (tools, then system, then each message's content blocks), each
//! with the identity of the prefix that ends at it.
//!
//! Anthropic caches prefixes by content; `cache_control` only says where an
//! entry may be written, so a block's identity leaves its own `cache_control`
//! out (a breakpoint moved from one request to the next must not change the
//! prefix it ends). Each block has its own 64-bit FNV-1a hash over a
//! canonical walk of it, and the prefix's identity is a running FNV-1a hash
//! over those: equal prefixes give equal hashes, and a change anywhere gives
//! a different hash from that block on, while the blocks' own hashes say
//! which blocks changed. It lives only in this process (the pin's log), so a
//! 64-bit hash is enough.

use serde_json::Value;

use crate::text::{fnv_step, FNV_OFFSET};

/// Where a block sits in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Tool(usize),
    System(usize),
    /// Message `.0`, content block `.1` (string content is block 0).
    Message(usize, usize),
}

/// One block of the prompt, in cache order.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub place: Place,
    /// The hash of the prefix that ends with this block.
    pub prefix: u64,
    /// The hash of this block alone (its `cache_control` left out): which
    /// blocks an edit changed, where the prefixes after the first all differ.
    pub own: u64,
    /// Characters of the prefix that ends with this block (its JSON text,
    /// roughly: the measure the break-even rules and the log compare with
    /// usage tokens × 4).
    pub chars: usize,
    /// The block's `cache_control`, if it is a breakpoint.
    pub cache_control: Option<Value>,
    /// `tool_use_id` of a `tool_result` block.
    pub tool_use_id: Option<String>,
    /// A `text` block (or string content).
    pub text: bool,
}

/// Messages of the body, as the pin reads them: role and block range.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageShape {
    pub role: String,
    /// Index of its first block in [`Prompt::blocks`], and how many it has.
    pub first: usize,
    pub len: usize,
    /// Its content is a string (one text block once pinned).
    pub string: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prompt {
    pub blocks: Vec<Block>,
    pub messages: Vec<MessageShape>,
}

struct Fnv {
    h: u64,
    chars: usize,
}

impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        self.h = b.iter().fold(self.h, |h, &x| fnv_step(h, x));
    }

    /// A tag byte between values, so `["ab"]` and `["a","b"]` differ.
    fn tag(&mut self, t: u8) {
        self.bytes(&[t]);
    }

    fn value(&mut self, v: &Value, top: bool) {
        match v {
            Value::Null => self.tag(0),
            Value::Bool(b) => self.tag(if *b { 1 } else { 2 }),
            Value::Number(n) => {
                // By value, not by text: formatting numbers would pull float
                // printing into the wasm module (docs/DESIGN.md, `decimal`).
                self.tag(3);
                let bits = n.as_u64().unwrap_or_else(|| n.as_f64().map_or(0, f64::to_bits));
                self.chars = self.chars.saturating_add(8);
                self.bytes(&bits.to_le_bytes());
            }
            Value::String(s) => {
                self.tag(4);
                self.chars = self.chars.saturating_add(s.len().saturating_add(2));
                self.bytes(s.as_bytes());
                self.tag(5);
            }
            Value::Array(a) => {
                self.tag(6);
                for x in a {
                    self.chars = self.chars.saturating_add(1);
                    self.value(x, false);
                }
                self.tag(7);
            }
            Value::Object(o) => {
                self.tag(8);
                for (k, x) in o {
                    if top && k == "cache_control" {
                        continue;
                    }
                    self.chars = self.chars.saturating_add(k.len().saturating_add(4));
                    self.bytes(k.as_bytes());
                    self.tag(9);
                    self.value(x, false);
                }
                self.tag(10);
            }
        }
    }
}

/// The body's blocks in cache order, and its messages' shapes. Anything that
/// is not a list where a list belongs is skipped (the pin then finds nothing
/// to do there), never an error: the body is Pi's, and the pin only reads it.
pub fn read(body: &Value) -> Prompt {
    let mut fnv = Fnv { h: FNV_OFFSET, chars: 0 };
    let mut prompt = Prompt::default();
    let push = |fnv: &mut Fnv, prompt: &mut Prompt, place: Place, b: &Value| {
        // The block is walked once: its own hash, folded into the prefix's.
        let mut own = Fnv { h: FNV_OFFSET, chars: 0 };
        own.value(b, true);
        fnv.chars = fnv.chars.saturating_add(own.chars);
        fnv.bytes(&own.h.to_le_bytes());
        fnv.tag(11);
        prompt.blocks.push(Block {
            place,
            prefix: fnv.h,
            own: own.h,
            chars: fnv.chars,
            cache_control: b.get("cache_control").filter(|c| !c.is_null()).cloned(),
            tool_use_id: if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                b.get("tool_use_id").and_then(Value::as_str).map(str::to_string)
            } else {
                None
            },
            text: b.is_string() || b.get("type").and_then(Value::as_str) == Some("text"),
        });
    };
    // The model is part of the cache key, but the log keys entries by model
    // itself; tools and system come first in Anthropic's cache order.
    for (i, t) in body.get("tools").and_then(Value::as_array).into_iter().flatten().enumerate() {
        push(&mut fnv, &mut prompt, Place::Tool(i), t);
    }
    match body.get("system") {
        Some(s @ Value::String(_)) => fnv.value(s, true),
        Some(Value::Array(a)) => {
            for (i, b) in a.iter().enumerate() {
                push(&mut fnv, &mut prompt, Place::System(i), b);
            }
        }
        _ => {}
    }
    for (m, msg) in body.get("messages").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let role = msg.get("role").and_then(Value::as_str).unwrap_or("").to_string();
        fnv.tag(12);
        fnv.bytes(role.as_bytes());
        let first = prompt.blocks.len();
        let content = msg.get("content");
        let string = matches!(content, Some(Value::String(_)));
        match content {
            Some(Value::Array(a)) => {
                for (k, b) in a.iter().enumerate() {
                    push(&mut fnv, &mut prompt, Place::Message(m, k), b);
                }
            }
            Some(s @ Value::String(_)) => push(&mut fnv, &mut prompt, Place::Message(m, 0), s),
            _ => {}
        }
        prompt.messages.push(MessageShape { role, first, len: prompt.blocks.len() - first, string });
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(last: Value) -> Value {
        json!({
            "system": [{"type": "text", "text": "You are Pi.", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "bash", "input_schema": {}}],
            "messages": [
                {"role": "user", "content": "fix the tests"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
                {"role": "user", "content": [last]},
            ]
        })
    }

    #[test]
    fn a_breakpoint_is_not_part_of_the_prefix() {
        let a = read(&body(json!({"type": "tool_result", "tool_use_id": "t1", "content": "ok"})));
        let b = read(&body(
            json!({"type": "tool_result", "tool_use_id": "t1", "content": "ok", "cache_control": {"type": "ephemeral"}}),
        ));
        assert_eq!(a.blocks.len(), 5);
        assert_eq!(
            a.blocks.iter().map(|x| x.prefix).collect::<Vec<_>>(),
            b.blocks.iter().map(|x| x.prefix).collect::<Vec<_>>()
        );
        assert!(a.blocks[4].cache_control.is_none() && b.blocks[4].cache_control.is_some());
        assert_eq!(b.blocks[4].tool_use_id.as_deref(), Some("t1"));
        assert_eq!(b.blocks[4].place, Place::Message(2, 0));
        assert!(b.blocks[2].text, "string content is a text block");
        assert_eq!(b.messages[0], MessageShape { role: "user".into(), first: 2, len: 1, string: true });
    }

    #[test]
    fn a_change_moves_every_later_prefix() {
        let a = read(&body(json!({"type": "tool_result", "tool_use_id": "t1", "content": "ok"})));
        let b = read(&body(json!({"type": "tool_result", "tool_use_id": "t1", "content": "OK"})));
        assert_eq!(a.blocks[3].prefix, b.blocks[3].prefix);
        assert_ne!(a.blocks[4].prefix, b.blocks[4].prefix);
        assert!(a.blocks.windows(2).all(|w| w[0].chars < w[1].chars));
        // Nested strings split differently hash differently.
        let c = read(&json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "ab"}]}]}));
        let d = read(
            &json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}),
        );
        assert_ne!(c.blocks[0].prefix, d.blocks[1].prefix);
    }

    #[test]
    fn a_body_of_the_wrong_shape_reads_as_empty() {
        for v in [json!(null), json!(3), json!({"messages": "x"}), json!({"messages": [1, {"content": 2}]})] {
            let p = read(&v);
            assert!(p.blocks.is_empty());
        }
    }
}
