//! The branch's compaction history: how many compactions it has, what the
//! newest one cut from and to, and what its summary costs.
//!
//! Pi records `tokensBefore` on the compaction entry but no figure after it,
//! so "to" is the report's estimate of what the compaction left: the system
//! prompt and tool rows, the summary, and the messages it kept (those whose
//! entries sit before it on the branch).

use super::composition::Row;
use super::{add, chars_to_tokens, count, whole_tokens, HistoryInputs, Messages};
use context_guard_base::text::js_len;
use serde::Serialize;

/// Compactions on the branch.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct History {
    pub count: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub latest: Option<LatestCut>,
}

/// What the newest compaction did.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LatestCut {
    /// Pi's `tokensBefore`.
    pub tokens_before: u64,
    /// The estimate of what it left (see the module comment).
    pub tokens_after: u64,
    /// The summary text at characters / 4.
    pub summary_tokens: u64,
}

/// The history from the branch's compaction entries.
pub fn history(inputs: &HistoryInputs, messages: &Messages, rows: &[Row]) -> History {
    let latest = inputs.latest.as_ref().map(|latest| {
        let summary_tokens = chars_to_tokens(js_len(&latest.summary));
        let fixed = rows.iter().filter(|r| r.id == "system" || r.id == "tools").fold(0, |s, r| add(s, r.tokens));
        let kept = inputs
            .kept
            .iter()
            .filter_map(|&i| Some((messages.tokens.get(i)?, messages.kind_of(i))))
            .filter(|(_, kind)| kind.role != "system")
            .fold(0, |s, (&t, _)| add(s, whole_tokens(t)));
        LatestCut {
            tokens_before: whole_tokens(latest.tokens_before),
            tokens_after: add(add(fixed, summary_tokens), kept),
            summary_tokens,
        }
    });
    History { count: inputs.count.max(u32::from(latest.is_some())), latest }
}

/// The effect of a compaction that just finished.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Compacted {
    /// Pi's `tokensBefore`.
    pub before: u64,
    /// Pi's total when it is known again, else the composition estimate.
    pub after: u64,
    /// Whether `after` is the estimate (Pi's total is pending until the next reply).
    pub after_is_estimate: bool,
    /// One line saying so.
    pub line: String,
}

/// Before and after figures of a compaction: Pi has no total until its next
/// reply, so "after" is the composition estimate until then, and says so.
pub fn compacted(before: f64, host: Option<u64>, estimate: u64) -> Compacted {
    let before = whole_tokens(before);
    let (after, after_is_estimate) = match host {
        Some(t) => (t, false),
        None => (estimate, true),
    };
    let line = if after_is_estimate {
        format!(
            "Compacted: {} -> ~{} tokens (the composition estimate; Pi's total is pending until the next reply)",
            count(before),
            count(after)
        )
    } else {
        format!("Compacted: {} -> {} tokens", count(before), count(after))
    };
    Compacted { before, after, after_is_estimate, line }
}

#[cfg(test)]
mod tests {
    use super::super::gauge::hue_of;
    use super::super::LatestCompaction;
    use super::*;

    fn row(id: &str, tokens: u64) -> Row {
        Row {
            id: id.into(),
            label: id.into(),
            tokens,
            count: 0,
            percent: 0.0,
            cells: 0,
            thin: false,
            hue: hue_of(id, 0),
            depth: 0,
            caption: id.into(),
            tokens_text: String::new(),
            percent_text: String::new(),
        }
    }

    #[test]
    fn no_compaction_means_no_cut() {
        assert_eq!(history(&HistoryInputs::default(), &Messages::default(), &[]), History { count: 0, latest: None });
    }

    #[test]
    fn the_newest_cut_runs_from_pis_figure_to_what_was_left() {
        let inputs = HistoryInputs {
            count: 2,
            latest: Some(LatestCompaction { tokens_before: 52_345.0, summary: "s".repeat(401) }),
            kept: vec![1, 2, 99],
        };
        let mut messages = Messages::default();
        for (role, tokens) in [("user", 1000.0), ("user", 30.0), ("assistant", 12.0), ("user", 5.0)] {
            messages.push(role, None, tokens);
        }
        let rows = [row("system", 100), row("tools", 50), row("user", 1035)];
        let h = history(&inputs, &messages, &rows);
        assert_eq!(h.count, 2);
        assert_eq!(
            h.latest,
            Some(LatestCut { tokens_before: 52_345, tokens_after: 150 + 101 + 42, summary_tokens: 101 })
        );
    }

    #[test]
    fn a_compaction_reports_before_and_after() {
        let c = compacted(52_345.0, None, 8_100);
        assert_eq!((c.before, c.after, c.after_is_estimate), (52_345, 8_100, true));
        assert!(c.line.starts_with("Compacted: 52.3k -> ~8.1k tokens"), "{}", c.line);
        let known = compacted(f64::NAN, Some(900), 1);
        assert_eq!(known.line, "Compacted: 0 -> 900 tokens");
    }

    #[test]
    fn a_latest_entry_implies_at_least_one() {
        let inputs = HistoryInputs { count: 0, latest: Some(LatestCompaction::default()), kept: vec![] };
        assert_eq!(history(&inputs, &Messages::default(), &[]).count, 1);
    }
}
