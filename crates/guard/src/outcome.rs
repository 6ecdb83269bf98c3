//! What a pass appends (docs/GUARD.md, "Whole items"): the `context_edit` drafts and the
//! record of the pass, and the record as `/guard` reads it back.
//!
//! For: those types, which the pass (`pass::finish`) builds, `json` writes
//! and `summary` reads. Not for: deciding what they say. They sit below all
//! three, so that writing them needs nothing from the pass.

use serde::Serialize;
use serde_json::Value;

use crate::cache::BreakEven;
use crate::decide::Outcome as ResultOutcome;
use crate::withhold::Withheld;

/// The record's `customType` (the original guard's, so `/guard` reads its records too).
pub const RECORD_TYPE: &str = "context-guard";
/// The record's version.
pub const RECORD_VERSION: u32 = 1;

/// When a pass runs.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "PassPhase"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    #[default]
    RunEnd,
    MidRun,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::RunEnd => "run-end",
            Phase::MidRun => "mid-run",
        }
    }

    pub fn parse(s: &str) -> Option<Phase> {
        [Phase::RunEnd, Phase::MidRun].into_iter().find(|p| p.as_str() == s)
    }
}

/// What the pass appends: `{ entries: [...event.entries, ...outcome.entries] }`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "PassOutcome"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// The `context_edit` drafts, then the record when the pass made a request.
    pub entries: Vec<Draft>,
    /// The record's data (also the last of `entries`), for the status bar.
    pub record: Option<Record>,
    /// Characters the edits keep out of the context.
    pub saved_chars: usize,
    /// The pass's break-even decisions, also when no record holds them (a
    /// pass that only deferred old images appends nothing), for `/guard`.
    pub break_even: Vec<BreakEven>,
    /// A late mid-run checkpoint (`pass::land`) whose edits would have paid
    /// where it was planned and all wait where it lands, the context having
    /// grown meanwhile: its answers may be landed again at a later boundary
    /// where another pass's edits rewrite the context anyway. Written only
    /// when set.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(as = "Option<bool>", optional))]
    pub carry: bool,
}

/// A session entry draft Pi appends (`SessionBoundaryDraft`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "GuardDraft"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum Draft {
    /// `replacement: null` omits the entry (only whole exchanges, never a lone result).
    #[serde(rename = "context_edit", rename_all = "camelCase")]
    ContextEdit { target_id: String, replacement: Option<Replacement> },
    #[serde(rename = "custom", rename_all = "camelCase")]
    Custom { custom_type: String, data: Record },
}

/// A replacement's content: one text block.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replacement {
    pub content: Vec<TextBlock>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextBlock {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: String,
    /// Parts of `text` that are ranges of an out-of-line input text, so the
    /// boundary can send them as ranges (see `pass::finish_json`); not part of
    /// the draft.
    #[serde(skip)]
    pub ranges: Vec<TextRange>,
}

/// `text[start..end]` (bytes) is `texts[source][from..to]` (UTF-16 units)
/// of the out-of-line texts the plan was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextRange {
    pub start: usize,
    pub end: usize,
    pub source: usize,
    pub from: usize,
    pub to: usize,
}

/// The record of a pass, `data` of `{ customType: "context-guard" }`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "GuardRecord"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub v: u32,
    pub phase: Phase,
    pub model: String,
    pub saved_chars: usize,
    pub requests: usize,
    pub input_tokens: f64,
    pub cost_usd: f64,
    pub ms: f64,
    pub timed_out: bool,
    pub results: Vec<ResultRecord>,
    /// The break-even decisions of the pass, with their numbers (for
    /// `/guard`): a checkpoint's, or at run end the exchanges' and the old
    /// images'. Optional (a record without it is read as before; `v` stays 1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub break_even: Vec<BreakEven>,
    /// What the pass's requests did not carry (issue 18): secrets by kind
    /// (counts, never values) and the labels of outputs of secret files.
    /// Optional like `breakEven`.
    #[serde(default, skip_serializing_if = "Withheld::is_empty")]
    // As `Withheld`'s own `Serialize` writes it.
    #[cfg_attr(feature = "ts", ts(type = "{ secrets?: Record<string, number>; files?: Array<string> }"))]
    pub withheld: Withheld,
    /// When the edits landed, where the judge answered after the boundary the
    /// pass was planned at (`pass::land`). Optional like `breakEven`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub late: Option<Late>,
}

/// How much later than planned a pass's edits landed (the judge in the background).
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Late {
    /// Provider requests between the plan and the landing: each carried the
    /// outputs whole.
    pub requests: usize,
    /// Milliseconds from the plan to the landing.
    pub ms: f64,
    /// The edits were applied in the `context` hook of a prompt's first
    /// request, before this record was appended (the bill counts them in
    /// that request, as an opening pass's).
    pub in_request: bool,
    /// Landings the answers waited through before this one (`Outcome::carry`).
    #[serde(skip_serializing_if = "is_zero")]
    #[cfg_attr(feature = "ts", ts(as = "Option<usize>", optional))]
    pub carried: usize,
}

/// What kind of item a result is (`kind`: large, small, exchange or image).
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultKind {
    #[default]
    Large,
    Small,
    Exchange,
    Image,
}

impl ResultKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultKind::Large => "large",
            ResultKind::Small => "small",
            ResultKind::Exchange => "exchange",
            ResultKind::Image => "image",
        }
    }

    pub fn parse(s: &str) -> Option<ResultKind> {
        [ResultKind::Large, ResultKind::Small, ResultKind::Exchange, ResultKind::Image]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// One item's result in a record.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "GuardResult"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultRecord {
    pub kind: ResultKind,
    pub entry_id: String,
    pub tool: String,
    pub label: String,
    pub outcome: ResultOutcome,
    pub reason: String,
    pub before_chars: usize,
    pub after_chars: usize,
    /// The classifier trace, such as `kw.15 focus=chunk_4:.52 keep 9/29`.
    pub jev: String,
    /// Entry ids an exchange omission covers (`recall` lists exactly these).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<String>,
    /// An output whose edit waits (`deferred`) though the judge answered:
    /// the characters its answer would have left, so the session learns what
    /// its judge removes (`memo::removed_share`). 0 otherwise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub judged_chars: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Record {
    /// A record as a pass wrote it (`data` of a `context-guard` entry on the
    /// branch), read by hand: every field must be there with its type (a
    /// record that is not one is left out) but the optional `breakEven`,
    /// unknown ones are ignored. By hand
    /// rather than derived, for the size of the wasm (see `read`).
    pub fn from_value(v: &Value) -> Option<Record> {
        let count = |k: &str| v.get(k)?.as_u64().and_then(|n| usize::try_from(n).ok());
        // Optional and read leniently: a decision that is not one is left out.
        let mut break_even = Vec::new();
        for b in v.get("breakEven").and_then(Value::as_array).into_iter().flatten() {
            break_even.extend(BreakEven::from_value(b.clone()));
        }
        Some(Record {
            v: v.get("v")?.as_u64().and_then(|n| u32::try_from(n).ok())?,
            phase: Phase::parse(v.get("phase")?.as_str()?)?,
            model: v.get("model")?.as_str()?.to_string(),
            saved_chars: count("savedChars")?,
            requests: count("requests")?,
            input_tokens: v.get("inputTokens")?.as_f64()?,
            cost_usd: v.get("costUsd")?.as_f64()?,
            ms: v.get("ms")?.as_f64()?,
            timed_out: v.get("timedOut")?.as_bool()?,
            results: v.get("results")?.as_array()?.iter().map(ResultRecord::from_value).collect::<Option<_>>()?,
            break_even,
            withheld: v.get("withheld").map(Withheld::from_value).unwrap_or_default(),
            // Written for the record's readers (`/guard`'s background line is the extension's); not read back.
            late: None,
        })
    }
}

impl ResultRecord {
    /// An item left whole for `reason`, with no trace: the base every result is written from.
    pub fn whole(
        kind: ResultKind,
        entry_id: &str,
        tool: &str,
        label: &str,
        chars: usize,
        reason: &str,
    ) -> ResultRecord {
        ResultRecord {
            kind,
            entry_id: entry_id.to_string(),
            tool: tool.to_string(),
            label: label.to_string(),
            outcome: ResultOutcome::Kept,
            reason: reason.to_string(),
            before_chars: chars,
            after_chars: chars,
            jev: String::new(),
            omitted: Vec::new(),
            judged_chars: 0,
        }
    }

    /// One result of a record (see [`Record::from_value`]); `omitted` may be absent.
    pub fn from_value(v: &Value) -> Option<ResultRecord> {
        let count = |k: &str| v.get(k)?.as_u64().and_then(|n| usize::try_from(n).ok());
        let text = |k: &str| v.get(k)?.as_str().map(str::to_string);
        Some(ResultRecord {
            kind: ResultKind::parse(v.get("kind")?.as_str()?)?,
            entry_id: text("entryId")?,
            tool: text("tool")?,
            label: text("label")?,
            outcome: ResultOutcome::parse(v.get("outcome")?.as_str()?)?,
            reason: text("reason")?,
            before_chars: count("beforeChars")?,
            after_chars: count("afterChars")?,
            jev: text("jev")?,
            omitted: match v.get("omitted") {
                None => Vec::new(),
                Some(ids) => ids.as_array()?.iter().map(|id| id.as_str().map(str::to_string)).collect::<Option<_>>()?,
            },
            judged_chars: count("judgedChars").unwrap_or(0),
        })
    }
}
