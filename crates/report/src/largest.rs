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
use super::{percent, whole_tokens, Hue, Kind, MessageText, Messages};
use context_guard_base::text::sanitize_line;
use serde::Serialize;

/// How many messages the list holds.
pub const LARGEST: usize = 5;

/// One of the largest messages.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
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
    /// Its one cell drawn thin ([`super::gauge::thin`]).
    pub thin: bool,
    pub hue: Hue,
    pub descriptor: String,
    /// `tokens` compact, as printed.
    pub tokens_text: String,
    /// `percent` to one decimal, as printed.
    pub percent_text: String,
}

/// The descriptor of one message, from its kind and its short texts.
pub fn descriptor(kind: &Kind, t: &MessageText) -> String {
    let clip = |s: &str| sanitize_line(s, LABEL_MAX);
    let text = t.text.as_deref().map(clip).filter(|t| !t.is_empty());
    let named = |name: &Option<String>| name.as_deref().map(clip).filter(|t| !t.is_empty());
    let found = match kind.role.as_str() {
        "toolResult" => named(&t.tool_name),
        "custom" => named(&kind.custom_type),
        "bashExecution" => t.command.as_deref().map(|c| clip(&format!("$ {}", c.trim_start()))),
        "assistant" => text.clone().or_else(|| named(&t.tool_name).map(|n| clip(&format!("calls {n}")))),
        _ => None,
    };
    found.or(text).unwrap_or_default()
}

/// The five messages with the highest counts, biggest first (earlier first on
/// a tie). `texts` is asked for the short texts of these five only.
pub fn largest(messages: &Messages, estimate: u64, texts: &mut dyn FnMut(usize) -> MessageText) -> Vec<Largest> {
    let mut top: Vec<(u64, usize)> = Vec::with_capacity(LARGEST + 1);
    for (i, t, kind) in messages.iter() {
        if kind.role == "system" {
            continue;
        }
        let tokens = whole_tokens(t);
        if top.len() == LARGEST && top.last().is_some_and(|&(t, _)| t >= tokens) {
            continue;
        }
        let at = top.iter().position(|&(t, _)| t < tokens).unwrap_or(top.len());
        top.insert(at, (tokens, i));
        top.truncate(LARGEST);
    }
    top.into_iter()
        .map(|(tokens, i)| {
            let kind = messages.kind_of(i);
            let bucket = match bucket_of(&kind.role) {
                Some("") | None => "other",
                Some(b) => b,
            };
            let share = percent(tokens, estimate);
            let filled = cells(tokens, estimate, ROW_CELLS);
            Largest {
                tokens_text: count(tokens),
                percent_text: percent_text(share),
                index: u32::try_from(i).unwrap_or(u32::MAX),
                role: sanitize_line(&kind.role, LABEL_MAX),
                bucket: bucket.to_string(),
                tokens,
                percent: share,
                cells: filled,
                thin: super::gauge::thin(filled, share, ROW_CELLS),
                hue: hue_of(bucket, 0),
                descriptor: descriptor(kind, &texts(i)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use context_guard_base::text::js_len;

    fn kind(role: &str) -> Kind {
        Kind { role: role.into(), custom_type: None, tool_name: None }
    }

    fn of(list: &[(&str, f64)]) -> Messages {
        let mut messages = Messages::default();
        for &(role, tokens) in list {
            messages.push(role, None, tokens);
        }
        messages
    }

    #[test]
    fn keeps_the_five_biggest_in_order_with_ties_by_position() {
        let counts = [5.0, 50.0, 7.0, 50.0, 1.0, 90.0, 3.0, 8.0, 60.0];
        let messages = of(&counts.map(|t| ("user", t)));
        let got: Vec<(u32, u64)> =
            largest(&messages, 274, &mut |_| MessageText::default()).iter().map(|l| (l.index, l.tokens)).collect();
        assert_eq!(got, [(5, 90), (8, 60), (1, 50), (3, 50), (7, 8)]);
    }

    #[test]
    fn asks_for_the_texts_of_the_listed_messages_only() {
        let messages = of(&[("user", 1.0); 9]);
        let mut asked = Vec::new();
        let got = largest(&messages, 9, &mut |i| {
            asked.push(i);
            MessageText { text: Some(format!("message {i}")), ..Default::default() }
        });
        assert_eq!(asked, [0, 1, 2, 3, 4]);
        assert_eq!(got[4].descriptor, "message 4");
    }

    #[test]
    fn system_messages_are_not_listed() {
        let got = largest(&of(&[("system", 1000.0), ("user", 1.0)]), 1, &mut |_| MessageText::default());
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].role, "user");
    }

    #[test]
    fn descriptors_name_the_tool_the_type_the_command_or_the_first_line() {
        let tool =
            MessageText { tool_name: Some("bash".into()), text: Some("huge output".into()), ..Default::default() };
        assert_eq!(descriptor(&kind("toolResult"), &tool), "bash");
        let custom = Kind { role: "custom".into(), custom_type: Some("plan-notes".into()), tool_name: None };
        assert_eq!(descriptor(&custom, &MessageText::default()), "plan-notes");
        let shell = MessageText { command: Some("ls -la\nrm x".into()), ..Default::default() };
        assert_eq!(descriptor(&kind("bashExecution"), &shell), "$ ls -la");
        let user = MessageText { text: Some("\n  first line\nsecond".into()), ..Default::default() };
        assert_eq!(descriptor(&kind("user"), &user), "first line");
        let calls = MessageText { tool_name: Some("read".into()), ..Default::default() };
        assert_eq!(descriptor(&kind("assistant"), &calls), "calls read");
        assert_eq!(descriptor(&kind("user"), &MessageText::default()), "");
    }

    #[test]
    fn descriptors_are_sanitized_and_clipped_to_forty() {
        let hostile = MessageText {
            tool_name: Some(format!("\x1b[2J\x1b[31mrm\x07\r\t{}", "y".repeat(100))),
            ..Default::default()
        };
        let d = descriptor(&kind("toolResult"), &hostile);
        assert!(!d.chars().any(|c| c.is_control()), "{d:?}");
        assert!(js_len(&d) <= 40);
        assert!(d.ends_with('…'));
        let emoji = MessageText { text: Some("😀".repeat(50)), ..Default::default() };
        assert!(js_len(&descriptor(&kind("user"), &emoji)) <= 40);
    }

    #[test]
    fn hues_follow_the_bucket() {
        let messages = of(&[("toolResult", 3.0), ("custom", 2.0), ("odd", 1.0)]);
        let got = largest(&messages, 6, &mut |_| MessageText::default());
        let hues: Vec<(&str, Hue)> = got.iter().map(|l| (l.bucket.as_str(), l.hue)).collect();
        assert_eq!(hues, [("toolResults", Hue::Hue5), ("custom", Hue::Meta), ("other", Hue::Meta)]);
    }
}
