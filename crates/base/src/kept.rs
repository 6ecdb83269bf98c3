//! What the guard keeps out of the window, as figures: the one type both the
//! guard (which computes it, `guard::stats`, and its net effect on the bill,
//! `guard::bill`) and the `/context` report (which shows it in its "Kept out
//! by context-guard" part) read.
//!
//! It lives in the base so that neither part imports the other: the guard
//! writes these figures, the report only reads them.

use serde::Serialize;
use serde_json::Value;

use crate::read::Fields;

/// The figures `/guard`, the status bar and `/context` show.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
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
    /// The guard's net effect on the main model's bill so far (`guard::bill`),
    /// when the extension computed it (`/guard`, `/context`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub bill: Option<Bill>,
}

/// The guard's net effect on the main model's bill so far, an estimate
/// (`guard::bill` computes it; docs/GUARD.md "What it saved so far"): reads
/// saved − rewrites paid − judge paid, each in tokens and dollars.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bill {
    /// The guard's records on the branch that kept something out (each one edit).
    pub edits: usize,
    /// Tokens the requests after the edits did not send (each request counted).
    pub saved_tokens: f64,
    /// Tokens the provider wrote again because of the edits (the first request after each).
    pub rewrite_tokens: f64,
    /// The session's tokens per character, as the bill measured them (`guard::bill`).
    pub tokens_per_char: f64,
    /// Dollars, where there are prices (`null` otherwise).
    pub saved_usd: Option<f64>,
    pub rewrite_usd: Option<f64>,
    /// The classifier's cost the records hold (always dollars).
    pub judge_usd: f64,
    /// `saved − rewrite − judge`, where there are prices.
    pub net_usd: Option<f64>,
    /// Dollars per million tokens: the cache-read price, and the price of a token
    /// written again (cache write, else uncached input).
    pub read_price: Option<f64>,
    pub write_price: Option<f64>,
    /// Where the prices came from: `usage` (the session's recorded usage),
    /// `catalog` (the model's `cost`), `usage and catalog`, or `none`.
    pub prices: String,
    /// The figure in words, the same in `/guard`, `/context`, the export and the audit.
    pub line: String,
    /// The one money answer (issue 28): `saved $0.27 on this session's bill so far (est.)` or `cost
    /// $0.01 more on this session's bill so far (est.)`; empty without prices or without an edit.
    pub answer: String,
    /// The same in two words, for the status bar: `saved $0.27`, `cost $0.01`, `saved <$0.01`.
    pub short: String,
}

impl Bill {
    /// A bill as `guard::bill` wrote it; `None` unless it is an object with its line.
    pub fn from_value(v: Value) -> Option<Bill> {
        let mut f = Fields::of(v);
        let line = f.opt_string("line")?;
        Some(Bill {
            edits: f.count("edits"),
            saved_tokens: f.number("savedTokens").unwrap_or(0.0),
            rewrite_tokens: f.number("rewriteTokens").unwrap_or(0.0),
            tokens_per_char: f.number("tokensPerChar").unwrap_or(0.25),
            saved_usd: f.number("savedUsd"),
            rewrite_usd: f.number("rewriteUsd"),
            judge_usd: f.number("judgeUsd").unwrap_or(0.0),
            net_usd: f.number("netUsd"),
            read_price: f.number("readPrice"),
            write_price: f.number("writePrice"),
            prices: f.string("prices"),
            line,
            answer: f.string("answer"),
            short: f.string("short"),
        })
    }
}

impl Stats {
    /// The figures as `columns_json` wrote them (read back by `/guard`'s
    /// summary); a missing or wrong-typed field reads as 0.
    pub fn from_value(v: Value) -> Stats {
        let mut f = Fields::of(v);
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
            bill: Bill::from_value(f.take("bill")),
        }
    }
}

crate::deserialize_via_value!(Stats);
