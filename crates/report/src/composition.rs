//! Where the window went: the system prompt by section and the tool
//! definitions one by one (both from [`system`]), the
//! conversation by role (tool results by tool), injected custom context grouped by type (the five
//! largest types named, the rest folded into one row), summaries and shell
//! output. The composition is the report's own estimate; its total is the sum
//! of the top-level rows, and `drift` names its difference from Pi's total.

use super::gauge::{cells, hue_of, ROW_CELLS};
use super::text::{count, percent_text, row_label};
use super::{add, largest_first, percent, system, whole_tokens, ContextInputs, Hue, Kind, Messages, NO_KIND};
use context_guard_base::text::sanitize_line;
use serde::Serialize;

/// How many injected types are named before the rest fold into one row.
pub const NAMED_TYPES: usize = 5;
/// Labels are one line of at most this many characters.
pub const LABEL_MAX: usize = 40;

/// One row of the composition table.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// The bucket: `system`, `tools`, `user`, `assistant`, `toolResults`,
    /// `custom` (children `custom:<type>` and `customOther`), `summaries`,
    /// `shell`, or `role:<name>` for a role this report does not know.
    pub id: String,
    /// Sanitized, one line.
    pub label: String,
    pub tokens: u64,
    /// Messages in the row (tools for `tools`, 0 for `system`).
    pub count: u32,
    /// Share of the composition estimate, unrounded.
    pub percent: f64,
    /// Filled cells of [`ROW_CELLS`].
    pub cells: u8,
    /// Its one cell drawn thin ([`super::gauge::thin`]).
    pub thin: bool,
    pub hue: Hue,
    /// 0 for a top-level row, 1 for a child folded under its parent.
    pub depth: u8,
    /// The label with its message count, as printed.
    pub caption: String,
    /// `tokens` compact (`5.1k`), as printed.
    pub tokens_text: String,
    /// `percent` to one decimal, as printed.
    pub percent_text: String,
}

#[derive(Default)]
struct Bucket {
    tokens: u64,
    count: u32,
}

impl Bucket {
    fn push(&mut self, tokens: u64) {
        self.tokens = add(self.tokens, tokens);
        self.count = self.count.saturating_add(1);
    }

    fn merge(&mut self, other: &Bucket) {
        self.tokens = add(self.tokens, other.tokens);
        self.count = self.count.saturating_add(other.count);
    }
}

/// The messages summed by kind, kinds in the order of their first message.
/// One pass over the counts; everything after it works on a handful of kinds.
fn by_kind(messages: &Messages) -> Vec<(&Kind, Bucket)> {
    // One slot per kind, and one more for a message whose kind is missing.
    let missing = messages.kinds.len();
    let mut slots: Vec<Bucket> = (0..=missing).map(|_| Bucket::default()).collect();
    let mut order: Vec<usize> = Vec::new();
    for (i, &t) in messages.tokens.iter().enumerate() {
        let k = messages.kind.get(i).map_or(missing, |&k| (k as usize).min(missing));
        if let Some(slot) = slots.get_mut(k) {
            if slot.count == 0 {
                order.push(k);
            }
            slot.push(whole_tokens(t));
        }
    }
    order
        .into_iter()
        .map(|k| (messages.kinds.get(k).unwrap_or(&NO_KIND), slots.get_mut(k).map(std::mem::take).unwrap_or_default()))
        .collect()
}

/// The bucket id of a message role (`None` for `system`, counted apart).
pub fn bucket_of(role: &str) -> Option<&'static str> {
    Some(match role {
        "system" => return None,
        "user" => "user",
        "assistant" => "assistant",
        "toolResult" => "toolResults",
        "custom" => "custom",
        "compactionSummary" | "branchSummary" => "summaries",
        "bashExecution" => "shell",
        _ => "",
    })
}

fn row(id: String, label: String, bucket: &Bucket, depth: u8) -> Row {
    let hue = hue_of(&id, depth);
    let caption = row_label(&label, &id, bucket.count);
    Row {
        id,
        label,
        tokens: bucket.tokens,
        count: bucket.count,
        percent: 0.0,
        cells: 0,
        thin: false,
        hue,
        depth,
        caption,
        tokens_text: count(bucket.tokens),
        percent_text: String::new(),
    }
}

/// The rows in display order, and the composition estimate (their total).
pub fn rows(inputs: &ContextInputs) -> (Vec<Row>, u64) {
    // The fixed buckets by id: a short list, like the named ones below (a
    // BTreeMap of its own key and value types costs ~3 KB of the `.wasm`).
    let mut by_bucket: Vec<(String, Bucket)> = Vec::new();
    // Types and unknown roles keep their order of first appearance for ties.
    let mut types: Vec<(String, Bucket)> = Vec::new();
    let mut others: Vec<(String, Bucket)> = Vec::new();
    let mut results: Vec<(String, Bucket)> = Vec::new();
    for (kind, bucket) in by_kind(&inputs.messages) {
        match bucket_of(&kind.role) {
            None => {}
            Some("") => merge_named(&mut others, &kind.role, &bucket),
            Some("toolResults") => {
                merge_named(&mut by_bucket, "toolResults", &bucket);
                merge_named(&mut results, kind.tool_name.as_deref().unwrap_or(""), &bucket);
            }
            Some("custom") => {
                merge_named(&mut by_bucket, "custom", &bucket);
                merge_named(&mut types, kind.custom_type.as_deref().unwrap_or(""), &bucket);
            }
            Some(id) => merge_named(&mut by_bucket, id, &bucket),
        }
    }

    let mut out: Vec<Row> = system::parts(&inputs.system, LABEL_MAX)
        .into_iter()
        .map(|p| row(p.id, p.label, &Bucket { tokens: p.tokens, count: p.count }, p.depth))
        .collect();
    for (id, label) in [("user", "User"), ("assistant", "Assistant"), ("toolResults", "Tool results")] {
        if let Some(b) = named(&by_bucket, id) {
            out.push(row(id.into(), label.into(), b, 0));
        }
    }
    // Tool results by tool, every tool named, largest first.
    let keys: Vec<u64> = results.iter().map(|t| t.1.tokens).collect();
    for (name, bucket) in largest_first(&keys).into_iter().filter_map(|k| results.get(k)) {
        let label = sanitize_line(name, LABEL_MAX);
        let label = if label.is_empty() { "(no tool)".to_string() } else { label };
        out.push(row(format!("result:{label}"), label, bucket, 1));
    }
    if let Some(b) = named(&by_bucket, "custom") {
        out.push(row("custom".into(), "Injected context".into(), b, 0));
        // Biggest first; ties keep their first appearance.
        let keys: Vec<u64> = types.iter().map(|t| t.1.tokens).collect();
        let mut rest = Bucket::default();
        let mut rest_types = 0usize;
        for (i, (name, bucket)) in largest_first(&keys).into_iter().filter_map(|k| types.get(k)).enumerate() {
            if i < NAMED_TYPES {
                let label = sanitize_line(name, LABEL_MAX);
                let label = if label.is_empty() { "(no type)".to_string() } else { label };
                out.push(row(format!("custom:{label}"), label, bucket, 1));
            } else {
                rest.tokens = add(rest.tokens, bucket.tokens);
                rest.count = rest.count.saturating_add(bucket.count);
                rest_types += 1;
            }
        }
        if rest_types > 0 {
            let label = format!("{rest_types} more type{}", if rest_types == 1 { "" } else { "s" });
            out.push(row("customOther".into(), label, &rest, 1));
        }
    }
    for (id, label) in [("summaries", "Summaries"), ("shell", "Shell output")] {
        if let Some(b) = named(&by_bucket, id) {
            out.push(row(id.into(), label.into(), b, 0));
        }
    }
    for (role, bucket) in &others {
        let label = sanitize_line(role, LABEL_MAX);
        let label = if label.is_empty() { "(no role)".to_string() } else { label };
        out.push(row(format!("role:{label}"), label, bucket, 0));
    }

    let estimate = out.iter().filter(|r| r.depth == 0).fold(0, |sum, r| add(sum, r.tokens));
    for r in &mut out {
        r.percent = percent(r.tokens, estimate);
        r.cells = cells(r.tokens, estimate, ROW_CELLS);
        r.thin = super::gauge::thin(r.cells, r.percent, ROW_CELLS);
        r.percent_text = percent_text(r.percent);
    }
    (out, estimate)
}

fn named<'a>(list: &'a [(String, Bucket)], name: &str) -> Option<&'a Bucket> {
    list.iter().find(|(n, _)| n == name).map(|(_, b)| b)
}

fn merge_named(list: &mut Vec<(String, Bucket)>, name: &str, bucket: &Bucket) {
    match list.iter_mut().find(|(n, _)| n == name) {
        Some((_, b)) => b.merge(bucket),
        None => {
            let mut b = Bucket::default();
            b.merge(bucket);
            list.push((name.to_string(), b));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{SystemInputs, ToolDigest};
    use super::*;
    use context_guard_base::text::js_len;

    fn of(list: &[(&str, f64)]) -> Messages {
        let mut messages = Messages::default();
        for &(role, tokens) in list {
            messages.push(role, None, tokens);
        }
        messages
    }

    fn find<'a>(rows: &'a [Row], id: &str) -> &'a Row {
        rows.iter().find(|r| r.id == id).unwrap_or_else(|| panic!("no row {id} in {rows:#?}"))
    }

    #[test]
    fn buckets_the_conversation_by_role_and_totals_the_top_level() {
        let inputs = ContextInputs {
            system: SystemInputs {
                content: "x".repeat(400),
                tools: vec![ToolDigest { name: "bash".into(), chars: 40 }],
                tools_chars: 42,
                ..Default::default()
            },
            messages: of(&[
                ("user", 10.0),
                ("assistant", 20.0),
                ("toolResult", 30.0),
                ("user", 5.0),
                ("bashExecution", 7.0),
                ("compactionSummary", 8.0),
                ("branchSummary", 2.0),
                ("futureRole", 3.0),
            ]),
            ..Default::default()
        };
        let (rows, estimate) = rows(&inputs);
        assert_eq!(find(&rows, "system").tokens, 100);
        assert_eq!((find(&rows, "tools").tokens, find(&rows, "tools").count), (11, 1));
        assert_eq!(find(&rows, "tool:bash").tokens, 10);
        assert_eq!((find(&rows, "user").tokens, find(&rows, "user").count), (15, 2));
        assert_eq!(find(&rows, "assistant").tokens, 20);
        assert_eq!(find(&rows, "toolResults").tokens, 30);
        assert_eq!(find(&rows, "shell").tokens, 7);
        assert_eq!((find(&rows, "summaries").tokens, find(&rows, "summaries").count), (10, 2));
        assert_eq!(find(&rows, "role:futureRole").hue, Hue::Meta);
        assert_eq!(estimate, 100 + 11 + 15 + 20 + 30 + 7 + 10 + 3);
        let order: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(
            order,
            [
                "system",
                "tools",
                "tool:bash",
                "user",
                "assistant",
                "toolResults",
                "result:(no tool)",
                "summaries",
                "shell",
                "role:futureRole"
            ]
        );
        let total: f64 = rows.iter().filter(|r| r.depth == 0).map(|r| r.percent).sum();
        assert!((total - 100.0).abs() < 1e-9);
    }

    #[test]
    fn tool_results_are_listed_by_tool_largest_first() {
        let mut messages = Messages::default();
        messages.push_result("bash", 30.0);
        messages.push_result("read", 50.0);
        messages.push("assistant", None, 5.0);
        messages.push_result("bash", 40.0);
        messages.push_result("\x1b[2Jgrep", 1.0);
        messages.push("toolResult", None, 2.0);
        let (rows, estimate) = rows(&ContextInputs { messages, ..Default::default() });
        let results: Vec<(&str, u64, u32, u8)> = rows
            .iter()
            .filter(|r| r.id.starts_with("result") || r.id == "toolResults")
            .map(|r| (r.id.as_str(), r.tokens, r.count, r.depth))
            .collect();
        assert_eq!(
            results,
            [
                ("toolResults", 123, 5, 0),
                ("result:bash", 70, 2, 1),
                ("result:read", 50, 1, 1),
                ("result:(no tool)", 2, 1, 1),
                ("result:[2Jgrep", 1, 1, 1),
            ]
        );
        assert_eq!(estimate, 128, "children are not counted twice");
        assert_eq!(find(&rows, "result:bash").caption, "bash (2)");
        assert_eq!(find(&rows, "result:read").percent_text, "39.1%");
    }

    #[test]
    fn names_the_five_largest_injected_types_and_folds_the_rest() {
        let mut messages = Messages::default();
        for (i, kind) in ["a", "b", "c", "d", "e", "f", "g"].iter().enumerate() {
            messages.push("custom", Some(kind), (i as f64 + 1.0) * 10.0);
        }
        messages.push("custom", Some("a"), 100.0);
        let (rows, _) = rows(&ContextInputs { messages, ..Default::default() });
        let custom_rows: Vec<(&str, u64, u8)> =
            rows.iter().filter(|r| r.id.starts_with("custom")).map(|r| (r.id.as_str(), r.tokens, r.depth)).collect();
        assert_eq!(
            custom_rows,
            [
                ("custom", 380, 0),
                ("custom:a", 110, 1),
                ("custom:g", 70, 1),
                ("custom:f", 60, 1),
                ("custom:e", 50, 1),
                ("custom:d", 40, 1),
                ("customOther", 50, 1),
            ]
        );
        assert_eq!(find(&rows, "customOther").label, "2 more types");
        assert_eq!(find(&rows, "custom:a").hue, Hue::Faint);
        assert_eq!(find(&rows, "custom").hue, Hue::Meta);
    }

    #[test]
    fn injected_type_labels_are_sanitized_and_clipped() {
        let hostile = format!("\x1b[31mevil\x07\ttype\r{}", "z".repeat(80));
        let mut messages = Messages::default();
        messages.push("custom", Some(&hostile), 4.0);
        let (rows, _) = rows(&ContextInputs { messages, ..Default::default() });
        let child = rows.iter().find(|r| r.depth == 1).expect("a child row");
        assert!(!child.label.chars().any(char::is_control), "{:?}", child.label);
        assert!(js_len(&child.label) <= LABEL_MAX);
    }

    #[test]
    fn system_messages_in_the_projection_are_the_system_rows_not_conversation() {
        let inputs = ContextInputs {
            system: SystemInputs { sections: vec![("preamble".into(), "p".repeat(60))], ..Default::default() },
            messages: of(&[("system", 999.0), ("system", 999.0)]),
            ..Default::default()
        };
        let (rows, estimate) = rows(&inputs);
        assert_eq!(estimate, 15, "system messages are not conversation: {rows:#?}");
        assert_eq!(find(&rows, "system:preamble").tokens, 15);
    }

    #[test]
    fn an_empty_session_has_only_the_prompt_and_tools() {
        let (rows, estimate) = rows(&ContextInputs::default());
        assert_eq!(rows.len(), 2);
        assert_eq!(estimate, 0);
        assert!(rows.iter().all(|r| r.cells == 0 && r.percent == 0.0));
    }
}
