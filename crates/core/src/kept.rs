//! What the guard keeps out of the window, as figures: the one type both the
//! guard (which computes it, `guard::stats`) and the `/context` report (which
//! shows it in its "Kept out by context-guard" row) read.
//!
//! It lives in the base so that neither part imports the other: the guard
//! writes these figures, the report only reads them.

use serde::Serialize;
use serde_json::Value;

use crate::read::Fields;

/// The figures `/guard`, the status bar and `/context` show.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Characters kept out of the context now (raw size − visible size).
    pub saved_chars: usize,
    /// Outputs (and, later, exchanges) that are kept out now.
    pub items: usize,
    /// `savedChars` of every record on the branch.
    pub lifetime_chars: usize,
    /// A compaction came after a record that saved something.
    pub compacted: bool,
    /// Run-end passes and mid-run checkpoints that asked the classifier.
    pub runs: usize,
    pub checkpoints: usize,
    pub requests: usize,
    pub input_tokens: f64,
    pub cost_usd: f64,
}

impl Stats {
    /// The figures as `columns_json` wrote them (read back by `/guard`'s
    /// summary); a missing or wrong-typed field reads as 0.
    pub fn from_value(v: Value) -> Stats {
        let f = Fields::of(v);
        Stats {
            saved_chars: f.count("savedChars"),
            items: f.count("items"),
            lifetime_chars: f.count("lifetimeChars"),
            compacted: f.boolean("compacted"),
            runs: f.count("runs"),
            checkpoints: f.count("checkpoints"),
            requests: f.count("requests"),
            input_tokens: f.number("inputTokens").unwrap_or(0.0),
            cost_usd: f.number("costUsd").unwrap_or(0.0),
        }
    }
}

crate::deserialize_via_value!(Stats);
