//! What was already judged, read back from the records on the branch
//! (never from drafts a handler returned: a later handler may replace them).
//!
//! For: the outputs a mid-run checkpoint judged (judged again only at run
//! end), and the old exchanges judged since the run's prompt (not asked twice
//! in one run). Not for: writing records (`outcome`) or the `/guard` text.

use serde::Serialize;
use serde_json::Value;

use crate::outcome::{Phase, Record, ResultKind};
use crate::read::Fields;
use crate::worth::{PRIOR_SHARE_PERMILLE, PRIOR_WEIGHT_CHARS};

/// A record and where it sits among the projected entries (its index in
/// `contextEntries`: records are `custom` entries, in the projection with no
/// messages).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlacedRecord {
    pub at: usize,
    #[serde(rename = "data")]
    pub record: Record,
}

impl PlacedRecord {
    /// `{ at, data }`; `None` when `data` is not a record.
    pub fn from_value(v: Value) -> Option<PlacedRecord> {
        let mut f = Fields::of(v);
        let at = f.opt_count("at")?;
        Some(PlacedRecord { at, record: Record::from_value(&f.take("data"))? })
    }
}

/// Reasons that say the classifier never answered for the item: it is asked
/// again (as the original guard's memo did).
const UNANSWERED: [&str; 3] = ["timeout", "error", "aborted"];

fn answered(reason: &str) -> bool {
    !reason.split(',').any(|r| UNANSWERED.contains(&r.trim()))
}

/// Entry ids of the outputs (large and small) that mid-run records judged
/// with an answer (a checkpoint judges each output once).
pub fn judged_mid_run(records: &[PlacedRecord]) -> Vec<&str> {
    records
        .iter()
        .filter(|p| p.record.phase == Phase::MidRun)
        .flat_map(|p| p.record.results.iter())
        .filter(|r| matches!(r.kind, ResultKind::Large | ResultKind::Small) && answered(&r.reason))
        .map(|r| r.entry_id.as_str())
        .collect()
}

/// Prompt ids of the exchanges judged by records after entry `since` (the
/// run's prompt), with an answer and not deferred (an exchange is judged once
/// a run; a deferred one is judged again at a later run end).
pub fn exchanges_judged_since(records: &[PlacedRecord], since: usize) -> Vec<&str> {
    records
        .iter()
        .filter(|p| p.at > since)
        .flat_map(|p| p.record.results.iter())
        .filter(|r| r.kind == ResultKind::Exchange && answered(&r.reason) && r.reason != DEFERRED)
        .map(|r| r.entry_id.as_str())
        .collect()
}

/// The reason of an edit that waits for its break-even: judged again at a later run end.
pub const DEFERRED: &str = "deferred";

/// Entry ids of the outputs (large and small) whose latest result says their
/// edit waits (`deferred`, issue 26): a later run end weighs them again.
pub fn deferred_outputs(records: &[PlacedRecord]) -> Vec<&str> {
    let mut latest: Vec<(&str, bool)> = Vec::new();
    for r in records.iter().flat_map(|p| p.record.results.iter()) {
        if !matches!(r.kind, ResultKind::Large | ResultKind::Small) {
            continue;
        }
        let waits = r.reason == DEFERRED;
        match latest.iter_mut().find(|(id, _)| *id == r.entry_id) {
            Some(slot) => slot.1 = waits,
            None => latest.push((&r.entry_id, waits)),
        }
    }
    latest.into_iter().filter(|(_, waits)| *waits).map(|(id, _)| id).collect()
}

/// `id` is in a list made by this module. A linear search: the lists hold
/// the items of a few records, and a sort would add its code to the wasm.
pub fn contains(list: &[&str], id: &str) -> bool {
    list.contains(&id)
}

/// The share of judged characters the session's earlier passes removed, in
/// thousandths: large, small and exchange results of every record (before −
/// after over before; images are not judged), with the prior
/// [`PRIOR_SHARE_PERMILLE`] counted as [`PRIOR_WEIGHT_CHARS`] judged characters
/// of its own, so a first small item does not decide it alone and a session
/// with no pass yet gets the prior.
pub fn removed_share<'a>(records: impl IntoIterator<Item = &'a Record>) -> usize {
    share_with_prior(records, PRIOR_SHARE_PERMILLE, None)
}

/// [`removed_share`] with another prior, of one kind of item (`None`: every
/// kind): a run end asks its judge about large and small outputs on the best
/// case (`pass::gate`, 1000) until the session's answers about that kind say
/// otherwise. An output whose edit waited counts what its judge would have
/// removed.
pub fn share_with_prior<'a>(
    records: impl IntoIterator<Item = &'a Record>,
    prior_permille: usize,
    kind: Option<ResultKind>,
) -> usize {
    let weight = PRIOR_WEIGHT_CHARS as u128;
    let (mut before, mut removed) = (weight, weight * prior_permille.min(1000) as u128 / 1000);
    for r in records.into_iter().flat_map(|r| &r.results) {
        // Only what a judge answered teaches: not an image, not an item that waited unasked or went unanswered.
        let unasked = r.reason == DEFERRED && r.judged_chars == 0;
        let of_kind = kind.is_none_or(|k| k == r.kind);
        if r.kind != ResultKind::Image && of_kind && !unasked && answered(&r.reason) {
            let after = if r.judged_chars > 0 { r.judged_chars } else { r.after_chars };
            before = before.saturating_add(r.before_chars as u128);
            removed = removed.saturating_add(r.before_chars.saturating_sub(after) as u128);
        }
    }
    usize::try_from(removed.saturating_mul(1000) / before).unwrap_or(1000).min(1000)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn record(phase: &str, results: &[(&str, &str, &str)]) -> Value {
        json!({
            "v": 1, "phase": phase, "model": "m", "savedChars": 0, "requests": 1, "inputTokens": 0.0,
            "costUsd": 0.0, "ms": 1.0, "timedOut": false,
            "results": results.iter().map(|(kind, id, reason)| json!({
                "kind": kind, "entryId": id, "tool": "bash", "label": "bash", "outcome": "kept",
                "reason": reason, "beforeChars": 10, "afterChars": 10, "jev": ""
            })).collect::<Vec<_>>()
        })
    }

    #[test]
    fn the_memo_skips_unanswered_items_and_run_end_records() {
        let placed = |at: usize, v: Value| PlacedRecord::from_value(json!({"at": at, "data": v})).unwrap();
        let records = vec![
            placed(
                3,
                record(
                    "mid-run",
                    &[
                        ("large", "r1", "whole-needed"),
                        ("large", "r2", "chunks,timeout"),
                        ("small", "r3", "not-needed"),
                        ("small", "r4", "error"),
                    ],
                ),
            ),
            placed(5, record("run-end", &[("large", "r9", "chunks"), ("exchange", "u1", "related")])),
            placed(
                9,
                record(
                    "mid-run",
                    &[("exchange", "u2", "related"), ("exchange", "u3", "deferred"), ("exchange", "u4", "timeout")],
                ),
            ),
        ];
        assert_eq!(judged_mid_run(&records), ["r1", "r3"]);
        assert_eq!(exchanges_judged_since(&records, 4), ["u1", "u2"]);
        assert_eq!(exchanges_judged_since(&records, 5), ["u2"]);
        assert!(contains(&judged_mid_run(&records), "r3") && !contains(&judged_mid_run(&records), "r2"));
        assert!(PlacedRecord::from_value(json!({"at": 1, "data": {"v": 1}})).is_none());
    }

    #[test]
    fn the_share_removed_is_learned_from_the_records() {
        let record = |results: Value| {
            crate::outcome::Record::from_value(
                &json!({"v": 1, "phase": "run-end", "model": "m", "savedChars": 0, "requests": 1,
                "inputTokens": 0.0, "costUsd": 0.0, "ms": 1.0, "timedOut": false, "results": results}),
            )
            .unwrap()
        };
        let result = |kind: &str, before: usize, after: usize| {
            json!({"kind": kind, "entryId": "e", "tool": "bash", "label": "l", "outcome": "distilled",
                "reason": "", "beforeChars": before, "afterChars": after, "jev": ""})
        };
        assert_eq!(removed_share([]), PRIOR_SHARE_PERMILLE);
        let a = record(json!([result("large", 10_000, 1_000), result("image", 50_000, 100)]));
        let b = record(json!([result("small", 500, 500), result("exchange", 4_500, 0)]));
        // Removed 9,000 + 0 + 4,500 of 15,000 judged, the image not judged; with the prior's
        // 12,000 of 20,000: 25,500 of 35,000 = 728‰.
        assert_eq!(removed_share([&a, &b]), 728);
        // Many passes outweigh the prior: 100 × the same, 1,362,000 of 1,520,000 = 896‰.
        assert_eq!(removed_share(std::iter::repeat_n([&a, &b], 100).flatten()), 896);
        assert_eq!(removed_share([&record(json!([result("image", 5, 1)]))]), PRIOR_SHARE_PERMILLE);
        // Of one kind, from the best case: large 9,000 + 20,000 of 30,000 = 966‰; small 20,000 of 20,500.
        assert_eq!(share_with_prior([&a, &b], 1000, Some(ResultKind::Large)), 966);
        assert_eq!(share_with_prior([&a, &b], 1000, Some(ResultKind::Small)), 975);
        // An edit that waited teaches what its judge would have left; one that waited unasked, nothing.
        let waited = |judged: usize| {
            json!({"kind": "large", "entryId": "w", "tool": "bash", "label": "l", "outcome": "kept",
                "reason": "deferred", "beforeChars": 20_000, "afterChars": 20_000, "jev": "", "judgedChars": judged})
        };
        assert_eq!(share_with_prior([&record(json!([waited(14_000)]))], 1000, Some(ResultKind::Large)), 650);
        assert_eq!(share_with_prior([&record(json!([waited(0)]))], 1000, Some(ResultKind::Large)), 1000);
    }
}
