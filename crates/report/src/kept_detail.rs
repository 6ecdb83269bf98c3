//! The guard's part in detail, read from the branch: what its passes keep out
//! by kind (large outputs, small outputs, exchanges, images), and how often
//! the model called `recall` on an output after the guard distilled it, by
//! tool (the "regret" count).
//!
//! Each entry counts once, as its newest record on the branch left it (a later
//! pass can redo an entry); an entry kept whole is not kept out. A recall
//! counts when the model asked for that entry after that record. The figures
//! are every pass on the branch, so a compaction does not take them back.

use super::{count, whole_tokens, MAX_SAFE};
use context_guard_base::text::sanitize_line;
use serde::Serialize;

/// The kinds of the guard's records, in the order the report lists them.
pub const KINDS: [&str; 4] = ["large", "small", "exchange", "image"];
const KIND_NAMES: [&str; 4] = ["large outputs", "small outputs", "exchanges", "images"];

/// One result of a `context-guard` record, where it sits on the branch.
#[derive(Debug, Clone, Default)]
pub struct KeptResult {
    /// Its record's position on the branch.
    pub at: usize,
    pub kind: String,
    pub entry_id: String,
    pub tool: String,
    /// `distilled`, `removed` or `kept`.
    pub outcome: String,
    /// `beforeChars - afterChars`.
    pub saved: f64,
}

/// The records' results and the model's recalls, from the branch.
#[derive(Debug, Clone, Default)]
pub struct KeptInputs {
    pub results: Vec<KeptResult>,
    /// Each `recall` call: its position on the branch and the entry it asked for.
    pub recalls: Vec<(usize, String)>,
}

/// One kind's figures.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KindFigures {
    pub kind: &'static str,
    pub items: u32,
    pub chars: u64,
}

/// One tool's outputs kept out, and how many of them the model recalled.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRecalls {
    /// Sanitized, at most 40 characters.
    pub tool: String,
    pub kept_out: u32,
    pub recalled: u32,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptDetail {
    /// Every kind, in [`KINDS`] order.
    pub kinds: Vec<KindFigures>,
    /// Every tool with an output kept out, in order of first appearance.
    pub tools: Vec<ToolRecalls>,
    pub kept_out: u32,
    pub recalled: u32,
}

/// The figures. Linear scans, not maps: a branch holds tens of results, and
/// a map keyed by entry id would cost the `.wasm` more than the scans cost time.
pub fn detail(inputs: &KeptInputs) -> KeptDetail {
    let mut out = KeptDetail {
        kinds: KINDS.iter().map(|&kind| KindFigures { kind, ..Default::default() }).collect(),
        ..Default::default()
    };
    // The newest result of each entry: walking back, the first one met.
    let mut seen: Vec<&str> = Vec::new();
    let mut newest = vec![false; inputs.results.len()];
    for (i, r) in inputs.results.iter().enumerate().rev() {
        if !seen.contains(&r.entry_id.as_str()) {
            seen.push(&r.entry_id);
            newest[i] = true;
        }
    }
    // In branch order, so tools keep the order they first appear in.
    for (r, _) in inputs.results.iter().zip(newest).filter(|(r, newest)| *newest && r.outcome != "kept") {
        if let Some(k) = KINDS.iter().position(|&k| k == r.kind).and_then(|i| out.kinds.get_mut(i)) {
            k.items = k.items.saturating_add(1);
            k.chars = k.chars.saturating_add(whole_tokens(r.saved)).min(MAX_SAFE);
        }
        let recalled = u32::from(inputs.recalls.iter().any(|(at, id)| *at > r.at && *id == r.entry_id));
        let tool = sanitize_line(&r.tool, 40);
        let at = match out.tools.iter().position(|t| t.tool == tool) {
            Some(at) => at,
            None => {
                out.tools.push(ToolRecalls { tool, ..Default::default() });
                out.tools.len() - 1
            }
        };
        if let Some(t) = out.tools.get_mut(at) {
            t.kept_out += 1;
            t.recalled += recalled;
        }
        out.kept_out += 1;
        out.recalled += recalled;
    }
    out
}

/// The lines under "Kept out by kind": one per kind with anything kept out.
pub fn kind_lines(d: &KeptDetail) -> Vec<String> {
    d.kinds
        .iter()
        .zip(KIND_NAMES)
        .filter(|(k, _)| k.items > 0)
        .map(|(k, name)| format!("{name}: {} kept out, ~{} tokens", k.items, count(k.chars.div_ceil(4))))
        .collect()
}

/// The regret sentence: recalls of outputs kept out, the tools with any named.
pub fn recall_line(d: &KeptDetail) -> String {
    let mut line = format!("Recalled after the guard kept it out: {} of {}", d.recalled, d.kept_out);
    let named: Vec<String> = d
        .tools
        .iter()
        .filter(|t| t.recalled > 0)
        .map(|t| format!("{} {} of {}", t.tool, t.recalled, t.kept_out))
        .collect();
    if !named.is_empty() {
        line.push_str(" (");
        line.push_str(&context_guard_base::text::join(&named, ", "));
        line.push(')');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(at: usize, kind: &str, id: &str, tool: &str, outcome: &str, saved: f64) -> KeptResult {
        KeptResult { at, kind: kind.into(), entry_id: id.into(), tool: tool.into(), outcome: outcome.into(), saved }
    }

    #[test]
    fn each_entry_counts_once_as_its_newest_record_left_it() {
        let inputs = KeptInputs {
            results: vec![
                result(3, "large", "a", "bash", "distilled", 40_000.0),
                result(3, "small", "b", "read", "removed", 800.0),
                result(3, "small", "c", "read", "kept", 0.0),
                result(9, "large", "a", "bash", "distilled", 41_000.0),
                result(9, "exchange", "p", "user", "removed", 12_000.0),
                result(9, "image", "i", "read", "removed", 4_800.0),
            ],
            // `a` asked for before its newest record: not after it; `b` after; `x` never kept out.
            recalls: vec![(5, "a".into()), (7, "b".into()), (12, "x".into()), (13, "i".into())],
        };
        let d = detail(&inputs);
        let kinds: Vec<(&str, u32, u64)> = d.kinds.iter().map(|k| (k.kind, k.items, k.chars)).collect();
        assert_eq!(kinds, [("large", 1, 41_000), ("small", 1, 800), ("exchange", 1, 12_000), ("image", 1, 4_800)]);
        let tools: Vec<(&str, u32, u32)> = d.tools.iter().map(|t| (t.tool.as_str(), t.kept_out, t.recalled)).collect();
        assert_eq!(tools, [("read", 2, 2), ("bash", 1, 0), ("user", 1, 0)]);
        assert_eq!((d.kept_out, d.recalled), (4, 2));
        assert_eq!(
            kind_lines(&d),
            [
                "large outputs: 1 kept out, ~10.3k tokens",
                "small outputs: 1 kept out, ~200 tokens",
                "exchanges: 1 kept out, ~3.0k tokens",
                "images: 1 kept out, ~1.2k tokens"
            ]
        );
        assert_eq!(recall_line(&d), "Recalled after the guard kept it out: 2 of 4 (read 2 of 2)");
    }

    #[test]
    fn nothing_kept_out_and_hostile_tool_names() {
        let d = detail(&KeptInputs::default());
        assert!(kind_lines(&d).is_empty());
        assert_eq!(recall_line(&d), "Recalled after the guard kept it out: 0 of 0");
        let odd = detail(&KeptInputs {
            results: vec![result(1, "future", "z", "\x1b[2Jevil\ttool", "distilled", f64::NAN)],
            recalls: vec![(2, "z".into())],
        });
        assert!(odd.kinds.iter().all(|k| k.items == 0), "an unknown kind is in no kind");
        assert_eq!(odd.tools[0].tool, "[2Jevil tool");
        assert_eq!(odd.recalled, 1);
    }
}
