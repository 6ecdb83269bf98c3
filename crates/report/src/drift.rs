//! The honest difference between Pi's total and the composition estimate.
//!
//! The rows are never forced to add up to the headline. A positive drift is
//! usage the rows do not explain (`unattributed`: a provider tokenizer, message
//! framing). A negative one before the first reply is Pi's message-only
//! fallback, which leaves the system prompt and the tool definitions out of its
//! total (`host counts messages only`).

use serde::Serialize;

/// Pi's total against the composition.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub host: Option<u64>,
    pub estimate: u64,
    /// `host - estimate`; `None` while the host's total is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub difference: Option<i64>,
    pub note: DriftNote,
}

/// What the difference means.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DriftNote {
    /// The two agree.
    None,
    /// Pi's total is larger: usage the rows do not explain.
    Unattributed,
    /// Pi's total is smaller and no assistant message exists yet.
    HostCountsMessagesOnly,
    /// Pi's total is smaller after a reply: the estimate overshoots.
    EstimateAbove,
    /// Pi's total is unknown (pending after a compaction, or no window).
    Unknown,
}

/// The drift between `host` and `estimate`; `replied` says whether the
/// projection holds an assistant message yet.
pub fn drift(host: Option<u64>, estimate: u64, replied: bool) -> Drift {
    let Some(h) = host else {
        return Drift { host, estimate, difference: None, note: DriftNote::Unknown };
    };
    let difference = h as i64 - estimate as i64;
    let note = match difference {
        0 => DriftNote::None,
        d if d > 0 => DriftNote::Unattributed,
        _ if !replied => DriftNote::HostCountsMessagesOnly,
        _ => DriftNote::EstimateAbove,
    };
    Drift { host, estimate, difference: Some(difference), note }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_difference_in_both_directions() {
        assert_eq!(drift(Some(120), 100, true).note, DriftNote::Unattributed);
        assert_eq!(drift(Some(120), 100, true).difference, Some(20));
        assert_eq!(drift(Some(80), 100, true).note, DriftNote::EstimateAbove);
        assert_eq!(drift(Some(80), 100, false).note, DriftNote::HostCountsMessagesOnly);
        assert_eq!(drift(Some(0), 1300, false).difference, Some(-1300));
        assert_eq!(drift(Some(100), 100, true).note, DriftNote::None);
    }

    #[test]
    fn an_unknown_total_has_no_difference() {
        let d = drift(None, 100, false);
        assert_eq!((d.difference, d.note), (None, DriftNote::Unknown));
    }
}
