//! The five largest single messages, so a report that is mostly one tool
//! result says so.
//!
//! Each comes with its role and one bounded descriptor: a tool name, a custom
//! type, a command, or the first line of text — sanitized (no escapes, bells,
//! carriage returns, tabs or other controls) and clipped to 40 characters. A
//! long tool result is represented by its tool name, not its content. System
//! messages are the system prompt row, not conversation, and are left out.

use super::composition::{bucket_of, LABEL_MAX};
use super::gauge::{cells, hue_of, ROW_CELLS};
use super::text::{count, percent_text};
use super::{percent, whole_tokens, Hue, MessageDigest};
use crate::text::sanitize_line;
use serde::Serialize;

/// How many messages the list holds.
pub const LARGEST: usize = 5;

/// One of the largest messages.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Largest {
    /// Its position in the projection.
    pub index: u32,
    /// Pi's role, sanitized.
    pub role: String,
    /// The composition bucket it belongs to (its hue's category).
    pub bucket: String,
    pub tokens: u64,
    /// Share of the composition estimate.
    pub percent: f64,
    pub cells: u8,
    pub hue: Hue,
    pub descriptor: String,
    /// `tokens` compact, as printed.
    pub tokens_text: String,
    /// `percent` to one decimal, as printed.
    pub percent_text: String,
}

/// The descriptor of one message.
pub fn descriptor(m: &MessageDigest) -> String {
    let clip = |s: &str| sanitize_line(s, LABEL_MAX);
    let text = m.text.as_deref().map(clip).filter(|t| !t.is_empty());
    let named = |name: &Option<String>| name.as_deref().map(clip).filter(|t| !t.is_empty());
    let found = match m.role.as_str() {
        "toolResult" => named(&m.tool_name),
        "custom" => named(&m.custom_type),
        "bashExecution" => m.command.as_deref().map(|c| clip(&format!("$ {}", c.trim_start()))),
        "assistant" => text.clone().or_else(|| named(&m.tool_name).map(|t| clip(&format!("calls {t}")))),
        _ => None,
    };
    found.or(text).unwrap_or_default()
}

/// The five messages with the highest counts, biggest first (earlier first on a tie).
pub fn largest(messages: &[MessageDigest], estimate: u64) -> Vec<Largest> {
    let mut top: Vec<(u64, usize)> = Vec::with_capacity(LARGEST + 1);
    for (i, m) in messages.iter().enumerate() {
        if m.role == "system" {
            continue;
        }
        let tokens = whole_tokens(m.tokens);
        if top.len() == LARGEST && top.last().is_some_and(|&(t, _)| t >= tokens) {
            continue;
        }
        let at = top.iter().position(|&(t, _)| t < tokens).unwrap_or(top.len());
        top.insert(at, (tokens, i));
        top.truncate(LARGEST);
    }
    top.into_iter()
        .filter_map(|(tokens, i)| {
            let m = messages.get(i)?;
            let bucket = match bucket_of(&m.role) {
                Some("") | None => "other",
                Some(b) => b,
            };
            let share = percent(tokens, estimate);
            Some(Largest {
                tokens_text: count(tokens),
                percent_text: percent_text(share),
                index: u32::try_from(i).unwrap_or(u32::MAX),
                role: sanitize_line(&m.role, LABEL_MAX),
                bucket: bucket.to_string(),
                tokens,
                percent: share,
                cells: cells(tokens, estimate, ROW_CELLS),
                hue: hue_of(bucket, 0),
                descriptor: descriptor(m),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::js_len;

    fn msg(role: &str, tokens: f64) -> MessageDigest {
        MessageDigest { role: role.into(), tokens, ..Default::default() }
    }

    #[test]
    fn keeps_the_five_biggest_in_order_with_ties_by_position() {
        let counts = [5.0, 50.0, 7.0, 50.0, 1.0, 90.0, 3.0, 8.0, 60.0];
        let messages: Vec<MessageDigest> = counts.iter().map(|&t| msg("user", t)).collect();
        let got: Vec<(u32, u64)> = largest(&messages, 274).iter().map(|l| (l.index, l.tokens)).collect();
        assert_eq!(got, [(5, 90), (8, 60), (1, 50), (3, 50), (7, 8)]);
    }

    #[test]
    fn system_messages_are_not_listed() {
        let got = largest(&[msg("system", 1000.0), msg("user", 1.0)], 1);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].role, "user");
    }

    #[test]
    fn descriptors_name_the_tool_the_type_the_command_or_the_first_line() {
        let tool = MessageDigest {
            tool_name: Some("bash".into()),
            text: Some("huge output".into()),
            ..msg("toolResult", 1.0)
        };
        assert_eq!(descriptor(&tool), "bash");
        let custom = MessageDigest { custom_type: Some("plan-notes".into()), ..msg("custom", 1.0) };
        assert_eq!(descriptor(&custom), "plan-notes");
        let shell = MessageDigest { command: Some("ls -la\nrm x".into()), ..msg("bashExecution", 1.0) };
        assert_eq!(descriptor(&shell), "$ ls -la");
        let user = MessageDigest { text: Some("\n  first line\nsecond".into()), ..msg("user", 1.0) };
        assert_eq!(descriptor(&user), "first line");
        let calls = MessageDigest { tool_name: Some("read".into()), ..msg("assistant", 1.0) };
        assert_eq!(descriptor(&calls), "calls read");
        assert_eq!(descriptor(&msg("user", 1.0)), "");
    }

    #[test]
    fn descriptors_are_sanitized_and_clipped_to_forty() {
        let hostile = MessageDigest {
            tool_name: Some(format!("\x1b[2J\x1b[31mrm\x07\r\t{}", "y".repeat(100))),
            ..msg("toolResult", 1.0)
        };
        let d = descriptor(&hostile);
        assert!(!d.chars().any(|c| c.is_control()), "{d:?}");
        assert!(js_len(&d) <= 40);
        assert!(d.ends_with('…'));
        let emoji = MessageDigest { text: Some("😀".repeat(50)), ..msg("user", 1.0) };
        assert!(js_len(&descriptor(&emoji)) <= 40);
    }

    #[test]
    fn hues_follow_the_bucket() {
        let got = largest(&[msg("toolResult", 3.0), msg("custom", 2.0), msg("odd", 1.0)], 6);
        let hues: Vec<(&str, Hue)> = got.iter().map(|l| (l.bucket.as_str(), l.hue)).collect();
        assert_eq!(hues, [("toolResults", Hue::Hue5), ("custom", Hue::Meta), ("other", Hue::Meta)]);
    }
}
