//! Context per request over the branch, the cache of the last request, and
//! the session's cost as Pi's footer shows it.
//!
//! Each request is an assistant message with valid usage (Pi's own rule: not
//! aborted, not an error, some tokens), counted as Pi counts context tokens
//! (`calculateContextTokens`: `totalTokens`, else the sum of input, output,
//! cache read and cache write). The extension reads them in branch order and
//! marks a request when a compaction or a context edit (the guard's) came
//! before it. The text gives the short form (first, peak, last, count); the
//! screen draws the series.

use super::{count, whole_tokens};
use context_guard_base::decimal::fixed;
use serde::Serialize;

/// A compaction entry came before this request (since the one before it).
pub const MARK_COMPACTION: u32 = 1;
/// A `context_edit` entry (the guard's distills, or another extension's edit)
/// came before this request.
pub const MARK_EDIT: u32 = 2;

/// What the extension read: the series, the last request's usage, the cost.
#[derive(Debug, Clone, Default)]
pub struct RequestInputs {
    /// Context tokens of each request on the branch, oldest first.
    pub tokens: Vec<f64>,
    /// Each request's marks ([`MARK_COMPACTION`], [`MARK_EDIT`]); missing is none.
    pub marks: Vec<u32>,
    /// The last request's usage: uncached input, cache read, cache write.
    pub last: Option<[f64; 3]>,
    /// The sum of `usage.cost.total` over every entry of the session (all
    /// branches), as Pi's footer sums it; `None` when Pi's footer shows none.
    pub cost: Option<f64>,
}

/// The figures the report shows.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Requests {
    pub count: u32,
    pub first: u64,
    pub peak: u64,
    /// The peak's request, from 1 (the first of equal peaks).
    pub peak_at: u32,
    pub last: u64,
    /// Requests after a compaction, and after a context edit.
    pub compactions: u32,
    pub edits: u32,
    /// The last request's cache: read, written, uncached input.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cache: Option<Cache>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cost: Option<f64>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cache {
    pub read: u64,
    pub written: u64,
    pub uncached: u64,
}

/// The figures, in one pass over the series.
pub fn requests(inputs: &RequestInputs) -> Requests {
    let mut r = Requests::default();
    for (i, &t) in inputs.tokens.iter().enumerate() {
        let t = whole_tokens(t);
        if i == 0 {
            r.first = t;
        }
        if t > r.peak || i == 0 {
            r.peak = t;
            r.peak_at = u32::try_from(i + 1).unwrap_or(u32::MAX);
        }
        r.last = t;
        let marks = inputs.marks.get(i).copied().unwrap_or(0);
        r.compactions += u32::from(marks & MARK_COMPACTION != 0);
        r.edits += u32::from(marks & MARK_EDIT != 0);
    }
    r.count = u32::try_from(inputs.tokens.len()).unwrap_or(u32::MAX);
    r.cache = inputs.last.map(|[uncached, read, written]| Cache {
        read: whole_tokens(read),
        written: whole_tokens(written),
        uncached: whole_tokens(uncached),
    });
    r.cost = inputs.cost.filter(|c| c.is_finite() && *c > 0.0);
    r
}

/// The series' sentence in short: count, first, peak, last (the screen draws
/// the series with its marks).
pub fn series_line(r: &Requests) -> String {
    if r.count == 0 {
        return "Context per request: no request on this branch yet".to_string();
    }
    format!(
        "Context per request: {} on this branch, first {}, peak {} (request {}), last {}",
        r.count,
        count(r.first),
        count(r.peak),
        r.peak_at,
        count(r.last)
    )
}

/// The last request's cache sentence, when there was a request.
pub fn cache_line(r: &Requests) -> Option<String> {
    let c = r.cache?;
    Some(format!(
        "Last request's cache: {} read, {} written, {} uncached",
        count(c.read),
        count(c.written),
        count(c.uncached)
    ))
}

/// The cost sentence, as Pi's footer shows it (`$0.123`), when it shows one.
pub fn cost_line(r: &Requests) -> Option<String> {
    let cost = r.cost?;
    Some(format!("Session cost: ${} (all branches, as Pi's footer sums it)", fixed(cost, 3)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_gives_first_peak_last_and_marks() {
        let inputs = RequestInputs {
            tokens: vec![1600.0, 45_200.0, 12_000.0, 45_200.0, 30_100.0],
            marks: vec![0, 0, MARK_COMPACTION, MARK_EDIT, MARK_EDIT | MARK_COMPACTION],
            last: Some([600.0, 28_000.0, 1500.0]),
            cost: Some(0.12345),
        };
        let r = requests(&inputs);
        assert_eq!((r.count, r.first, r.peak, r.peak_at, r.last), (5, 1600, 45_200, 2, 30_100));
        assert_eq!((r.compactions, r.edits), (2, 2));
        assert_eq!(
            series_line(&r),
            "Context per request: 5 on this branch, first 1.6k, peak 45.2k (request 2), last 30.1k"
        );
        assert_eq!(cache_line(&r).as_deref(), Some("Last request's cache: 28.0k read, 1.5k written, 600 uncached"));
        assert_eq!(cost_line(&r).as_deref(), Some("Session cost: $0.123 (all branches, as Pi's footer sums it)"));
    }

    #[test]
    fn no_requests_no_cache_no_cost() {
        let r = requests(&RequestInputs { cost: Some(0.0), ..Default::default() });
        assert_eq!(series_line(&r), "Context per request: no request on this branch yet");
        assert_eq!((cache_line(&r), cost_line(&r)), (None, None));
        let odd =
            requests(&RequestInputs { tokens: vec![f64::NAN, 5.0], marks: vec![], cost: Some(f64::NAN), last: None });
        assert_eq!((odd.first, odd.peak, odd.peak_at, odd.last, odd.cost), (0, 5, 2, 5, None));
    }
}
