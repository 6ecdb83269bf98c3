//! The `/context` report: where the context window goes.
//!
//! For: the whole report from one read of Pi. The extension reads Pi once per
//! open or refresh (usage, the current system message, compaction settings,
//! the projected messages with Pi's own per-message `estimateTokens`, the
//! compaction history) and hands it here as [`ContextInputs`]. [`build`]
//! returns the whole [`ContextReport`]: the headline and threshold, the
//! composition rows, the drift between Pi's total and the composition, the
//! compaction history, the five largest messages, the gauge cells with their
//! hues, and the plain-text report for non-TUI modes. The screen only slices
//! and paints it. Not for: the guard's decisions; what the guard keeps out
//! arrives as the base's `kept` figures, and this crate does not depend on
//! the guard's crates (docs/CONTEXT.md).
//!
//! Invariants: no I/O, no panic on any input; every count that leaves it is a
//! whole number at most [`MAX_SAFE`]; sizes are the base's UTF-16 counts.
//!
//! Each concept is its own module: [`composition`] (with [`system`], the
//! system message's rows), [`threshold`], [`drift`], [`history`],
//! [`requests`] (context per request, cache, cost), [`kept_detail`] (the
//! guard's part by kind, recalls by tool), [`largest`], [`gauge`],
//! [`text`] (the report's sentences; the base's text measures are
//! `context_guard_base::text`); [`input`] reads the inputs' JSON.

pub mod composition;
pub mod drift;
pub mod gauge;
pub mod history;
pub mod input;
pub mod kept_detail;
pub mod largest;
pub mod requests;
pub mod system;
pub mod text;
pub mod threshold;

use serde::Serialize;

/// The largest integer JavaScript holds exactly. Every count leaving the core
/// is capped here so the wasm boundary always produces a plain number.
pub const MAX_SAFE: u64 = (1 << 53) - 1;

/// Everything the report needs from one read of Pi.
///
/// A later "guard" section (what the guard keeps out of the window) is meant to
/// arrive as one more optional field here and one more optional section in
/// [`ContextReport`]; nothing else changes shape.
#[derive(Debug, Clone, Default)]
pub struct ContextInputs {
    /// `ctx.getContextUsage()`, absent when Pi has no model or no window.
    pub usage: Option<HostUsage>,
    /// The active model (`ctx.model`).
    pub model: Option<ModelRef>,
    /// The current system message: the projection's system messages replayed
    /// (Pi's `getCurrentSystemMessage`), or, before the first one, the prompt
    /// and the active tools.
    pub system: SystemInputs,
    /// The compaction settings as Pi holds them, and Pi's built-in defaults.
    pub compaction: CompactionInputs,
    /// `sessionManager.buildSessionProjection().messages`, as columns.
    pub messages: Messages,
    /// The branch's compaction entries.
    pub history: HistoryInputs,
    /// Pi's `tokensBefore` of a compaction that just finished, to report its effect.
    pub compacted_from: Option<f64>,
    /// What the guard keeps out of the window (`stats`), when the guard is loaded.
    pub guard: Option<context_guard_base::kept::Stats>,
    /// Context per request over the branch, the last request's cache, the session's cost.
    pub requests: requests::RequestInputs,
    /// The guard's records and the model's recalls on the branch, when the guard is loaded.
    pub kept_detail: Option<kept_detail::KeptInputs>,
}

/// Pi's own figures for the window.
#[derive(Debug, Clone, Default)]
pub struct HostUsage {
    /// `null` between a compaction and the next successful reply.
    pub tokens: Option<f64>,
    pub context_window: Option<f64>,
    pub percent: Option<f64>,
}

/// The active model, as far as the report needs it.
#[derive(Debug, Clone, Default)]
pub struct ModelRef {
    pub provider: String,
    pub id: String,
    pub context_window: Option<f64>,
}

/// The current system message, as Pi's `estimateTokens` counts it: its
/// content, its sections in order, and `JSON.stringify(toolsAdded)`.
#[derive(Debug, Clone, Default)]
pub struct SystemInputs {
    /// The content text (a forced prompt, or the appended contents).
    pub content: String,
    /// Named sections, in the message's order, each with its whole text.
    pub sections: Vec<(String, String)>,
    /// Each tool definition, in `toolsAdded` order.
    pub tools: Vec<ToolDigest>,
    /// `JSON.stringify(toolsAdded).length` (0 when there are none).
    pub tools_chars: u64,
}

/// One tool definition: its name and `JSON.stringify(tool).length`.
#[derive(Debug, Clone, Default)]
pub struct ToolDigest {
    pub name: String,
    pub chars: u64,
}

/// `pi.getSettings().compaction` (any shape: it is validated here) and
/// `DEFAULT_COMPACTION_SETTINGS` from the running Pi.
#[derive(Debug, Clone, Default)]
pub struct CompactionInputs {
    pub settings: Option<serde_json::Value>,
    pub defaults: CompactionDefaults,
}

/// Pi's built-in compaction defaults.
#[derive(Debug, Clone)]
pub struct CompactionDefaults {
    pub enabled: bool,
    /// `null` reads as NaN (see `input`).
    pub reserve_tokens: f64,
}

impl Default for CompactionDefaults {
    /// Pi's values (1.3.0 to 1.6.0), used only when the extension could not read them.
    fn default() -> Self {
        Self { enabled: true, reserve_tokens: 16_384.0 }
    }
}

/// The projected messages, in projection order, as columns: one count and
/// one kind per message, never one object or string each. The text a
/// descriptor needs is asked for separately, only for the messages the
/// report lists (see [`MessageText`]).
///
/// At the wasm boundary `tokens` and `kind` arrive as typed arrays (a copy of
/// memory) and `kinds` inside the JSON text; see [`build_json`].
#[derive(Debug, Clone, Default)]
pub struct Messages {
    /// Pi's `estimateTokens(message)` per message. Its length is the number of messages.
    pub tokens: Vec<f64>,
    /// Each message's kind: an index into `kinds`.
    pub kind: Vec<u32>,
    /// The distinct kinds the messages have, in any order.
    pub kinds: Vec<Kind>,
}

/// What a message is, as far as the composition needs: its role and, for an
/// injected (`custom`) message, its type, for a tool result, its tool. A
/// session has a few dozen of these at most.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kind {
    pub role: String,
    pub custom_type: Option<String>,
    pub tool_name: Option<String>,
}

/// The kind of a message whose index does not name one (`build_json` rejects
/// such input; a caller building [`Messages`] by hand may still produce it).
pub(crate) static NO_KIND: Kind = Kind { role: String::new(), custom_type: None, tool_name: None };

impl Messages {
    /// How many messages there are.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Appends one message, reusing an equal kind.
    pub fn push(&mut self, role: &str, custom_type: Option<&str>, tokens: f64) {
        let kind = Kind { role: role.to_string(), custom_type: custom_type.map(str::to_string), tool_name: None };
        self.push_kind(kind, tokens);
    }

    /// Appends one tool result of `tool`.
    pub fn push_result(&mut self, tool: &str, tokens: f64) {
        let kind = Kind { role: "toolResult".into(), custom_type: None, tool_name: Some(tool.into()) };
        self.push_kind(kind, tokens);
    }

    fn push_kind(&mut self, kind: Kind, tokens: f64) {
        let at = match self.kinds.iter().position(|k| *k == kind) {
            Some(at) => at,
            None => {
                self.kinds.push(kind);
                self.kinds.len() - 1
            }
        };
        self.kind.push(u32::try_from(at).unwrap_or(u32::MAX));
        self.tokens.push(tokens);
    }

    /// The kind of message `i`.
    pub fn kind_of(&self, i: usize) -> &Kind {
        self.kind.get(i).and_then(|&k| self.kinds.get(k as usize)).unwrap_or(&NO_KIND)
    }

    /// Each message's position, Pi's count and kind.
    pub fn iter(&self) -> impl Iterator<Item = (usize, f64, &Kind)> {
        self.tokens.iter().enumerate().map(|(i, &t)| (i, t, self.kind_of(i)))
    }

    /// Whether any message has this role.
    pub fn has_role(&self, role: &str) -> bool {
        // The kinds are a handful: most roles are settled without reading the messages.
        self.kinds.iter().any(|k| k.role == role) && (0..self.len()).any(|i| self.kind_of(i).role == role)
    }
}

/// The short texts of one message that its descriptor is made from. The host
/// is asked for them only for the messages the report lists (the five
/// largest), so a 5,000-message session does not cross as 5,000 strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageText {
    /// A tool result's tool, or the first tool an assistant message calls.
    pub tool_name: Option<String>,
    /// A shell execution's command (its start).
    pub command: Option<String>,
    /// The start of the message's first text.
    pub text: Option<String>,
}

/// The branch's compactions.
#[derive(Debug, Clone, Default)]
pub struct HistoryInputs {
    /// How many `compaction` entries the branch holds.
    pub count: u32,
    /// `getLatestCompactionEntry(branch)`.
    pub latest: Option<LatestCompaction>,
    /// Indexes into `messages` of the messages the newest compaction kept
    /// (their entries sit before it on the branch).
    pub kept: Vec<usize>,
}

/// The newest compaction entry.
#[derive(Debug, Clone, Default)]
pub struct LatestCompaction {
    /// `null` reads as NaN (see `input`).
    pub tokens_before: f64,
    pub summary: String,
}

/// The colour family of a row. A hue identifies a category; it never judges.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Hue {
    /// System prompt (blue).
    Hue1,
    /// Tool definitions (purple).
    Hue2,
    /// User messages (pink).
    Hue3,
    /// Assistant (green).
    Hue4,
    /// Tool results (amber).
    Hue5,
    /// Everything else, neutral.
    Meta,
    /// Children of a neutral row.
    Faint,
}

/// The whole report.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextReport {
    pub headline: threshold::Headline,
    pub threshold: threshold::Threshold,
    pub window_gauge: gauge::WindowGauge,
    /// The composition's own total: the sum of the top-level rows.
    pub estimate: u64,
    pub rows: Vec<composition::Row>,
    pub drift: drift::Drift,
    pub history: history::History,
    pub requests: requests::Requests,
    pub largest: Vec<largest::Largest>,
    /// The effect of a compaction that just finished (`compacted_from`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub compacted: Option<history::Compacted>,
    /// What the guard keeps out of the window, as the inputs gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub guard: Option<context_guard_base::kept::Stats>,
    /// The guard's part by kind and its recalls by tool, when the guard is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub kept_detail: Option<kept_detail::KeptDetail>,
    /// The report's sentences, shared by the screen and the text.
    pub sentences: text::Sentences,
    /// The plain-text report, for every mode but the TUI.
    pub text: String,
}

/// Builds the report from one read of Pi. `texts` gives the short texts of
/// message `i`; it is called once for each message the report lists.
pub fn build(inputs: &ContextInputs, texts: &mut dyn FnMut(usize) -> MessageText) -> ContextReport {
    let headline = threshold::headline(inputs.usage.as_ref(), inputs.model.as_ref());
    let threshold = threshold::resolve(&headline, inputs.model.as_ref(), &inputs.compaction);
    let (rows, estimate) = composition::rows(inputs);
    let window_gauge = gauge::window(&headline, &threshold, estimate);
    let drift = drift::drift(headline.tokens, estimate, inputs.messages.has_role("assistant"));
    let history = history::history(&inputs.history, &inputs.messages, &rows);
    let largest = largest::largest(&inputs.messages, estimate, texts);
    let compacted = inputs.compacted_from.map(|before| history::compacted(before, headline.tokens, estimate));
    let requests = requests::requests(&inputs.requests);
    let mut report = ContextReport {
        headline,
        threshold,
        window_gauge,
        estimate,
        rows,
        drift,
        history,
        requests,
        largest,
        compacted,
        guard: inputs.guard.clone(),
        kept_detail: inputs.kept_detail.as_ref().map(kept_detail::detail),
        sentences: text::Sentences::default(),
        text: String::new(),
    };
    report.sentences = text::sentences(&report);
    report.text = text::render(&report);
    report
}

/// [`build`] in the form the extension calls: [`ContextInputs`] as JSON text
/// without the two per-message columns and the two per-request ones, the
/// columns themselves (counts and kinds; context tokens and marks), and the
/// text lookup; returns the JSON text of [`ContextReport`].
///
/// For a 5,000-message session this is where the time went when the whole
/// input crossed as one JSON text (5,000 digest objects with text heads: a
/// `JSON.stringify`, a parse into 5,000 allocations, and 5,000 counts echoed
/// back). Now the counts and kinds cross as typed arrays, the JSON holds only
/// what is small (usage, prompt, tools, settings, the distinct kinds, the
/// system messages), and the report is a few kilobytes (measured in
/// `tests/bench/report.bench.ts`).
pub fn build_json(
    inputs: &str,
    (tokens, kind): (Vec<f64>, Vec<u32>),
    (series, marks): (Vec<f64>, Vec<u32>),
    texts: &mut dyn FnMut(usize) -> MessageText,
) -> Result<String, String> {
    let mut inputs = input::context_inputs(inputs)?;
    inputs.requests.tokens = series;
    inputs.requests.marks = marks;
    if kind.len() != tokens.len() {
        return Err(format!("context inputs: {} counts but {} kinds", tokens.len(), kind.len()));
    }
    if let Some((i, k)) = kind.iter().enumerate().find(|&(_, &k)| k as usize >= inputs.messages.kinds.len()) {
        return Err(format!(
            "context inputs: message {i} has kind {k}, but there are {} kinds",
            inputs.messages.kinds.len()
        ));
    }
    inputs.messages.tokens = tokens;
    inputs.messages.kind = kind;
    serde_json::to_string(&build(&inputs, texts)).map_err(|e| format!("context report: {e}"))
}

/// A count as the report prints it (`1,234`, `12.3k`), never above [`MAX_SAFE`].
pub fn count(n: u64) -> String {
    context_guard_base::text::short_count(usize::try_from(n.min(MAX_SAFE)).unwrap_or(usize::MAX))
}

/// A token count from the host, made safe: NaN, negatives and infinities are
/// 0, fractions round, and nothing exceeds [`MAX_SAFE`].
pub fn whole_tokens(t: f64) -> u64 {
    if t.is_finite() && t > 0.0 {
        (t.round() as u64).min(MAX_SAFE)
    } else {
        0
    }
}

/// `a + b`, never above [`MAX_SAFE`].
pub fn add(a: u64, b: u64) -> u64 {
    a.saturating_add(b).min(MAX_SAFE)
}

/// Characters to tokens the way Pi estimates them: `ceil(chars / 4)`.
pub fn chars_to_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4).min(MAX_SAFE)
}

/// The indexes of `keys`, largest first; equal keys keep their order. The
/// report's one sort, on the core's shared one (`order.rs`: `slice::sort`
/// would add ~4 KB of `.wasm` for its own element type).
pub fn largest_first(keys: &[u64]) -> Vec<usize> {
    let key = |i: usize| keys.get(i).copied().unwrap_or(0);
    context_guard_base::order::sorted_positions(keys.len(), &mut |a, b| key(b).cmp(&key(a)))
}

/// `part` as a percentage of `whole` (0 when the whole is 0).
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_token_counts_count_as_zero_and_big_ones_stay_exact_in_js() {
        assert_eq!(whole_tokens(f64::NAN), 0);
        assert_eq!(whole_tokens(-3.0), 0);
        assert_eq!(whole_tokens(f64::INFINITY), 0);
        assert_eq!(whole_tokens(2.5), 3);
        assert_eq!(whole_tokens(1e300), MAX_SAFE);
        assert_eq!(add(MAX_SAFE, 5), MAX_SAFE);
    }

    fn no_texts(_: usize) -> MessageText {
        MessageText::default()
    }

    #[test]
    fn the_json_form_reads_nulls_as_unknown_and_rejects_garbage() {
        let out = build_json(
            r#"{"usage":{"tokens":null,"contextWindow":1000},"messages":{"kinds":[{"role":"user"}]}}"#,
            (vec![f64::NAN], vec![0]),
            (vec![1.0, 3.0], vec![0, 1]),
            &mut no_texts,
        )
        .expect("a report");
        assert!(out.contains(r#""pending":true"#), "{out}");
        assert!(
            out.contains(r#""requests":{"count":2,"first":1,"peak":3,"peakAt":2,"last":3,"compactions":1"#),
            "{out}"
        );
        assert!(build_json("not json", (vec![], vec![]), (vec![], vec![]), &mut no_texts)
            .unwrap_or_default()
            .is_empty());
        assert!(build_json(
            r#"{"messages":{"kinds":[{"role":5}]}}"#,
            (vec![], vec![]),
            (vec![], vec![]),
            &mut no_texts
        )
        .is_err());
    }

    #[test]
    fn the_columns_must_agree_with_each_other_and_the_kinds() {
        let kinds = r#"{"messages":{"kinds":[{"role":"user"}]}}"#;
        let short = build_json(kinds, (vec![1.0, 2.0], vec![0]), (vec![], vec![]), &mut no_texts);
        assert_eq!(short, Err("context inputs: 2 counts but 1 kinds".to_string()));
        let unknown = build_json(kinds, (vec![1.0, 2.0], vec![0, 1]), (vec![], vec![]), &mut no_texts);
        assert_eq!(unknown, Err("context inputs: message 1 has kind 1, but there are 1 kinds".to_string()));
        let fine = build_json(kinds, (vec![1.0, 2.0], vec![0, 0]), (vec![], vec![]), &mut no_texts).expect("a report");
        assert!(fine.contains(r#""tokens":3,"count":2"#), "{fine}");
        assert!(!fine.contains("counts"), "the per-message counts stay on the host: {fine}");
    }

    #[test]
    fn messages_built_by_hand_never_panic_on_a_missing_kind() {
        let messages = Messages { tokens: vec![4.0, 8.0], kind: vec![7], ..Default::default() };
        let report = build(&ContextInputs { messages, ..Default::default() }, &mut no_texts);
        assert_eq!(report.estimate, 12);
        assert_eq!(report.largest.len(), 2);
    }

    #[test]
    fn kinds_are_shared_by_equal_messages() {
        let mut messages = Messages::default();
        messages.push("user", None, 1.0);
        messages.push("custom", Some("a"), 2.0);
        messages.push("user", None, 3.0);
        messages.push("custom", Some("b"), 4.0);
        messages.push("custom", Some("a"), 5.0);
        assert_eq!(messages.kind, [0, 1, 0, 2, 1]);
        assert_eq!(messages.kinds.len(), 3);
        assert!(messages.has_role("custom") && !messages.has_role("assistant"));
    }

    #[test]
    fn largest_first_keeps_ties_in_order() {
        assert_eq!(largest_first(&[1, 5, 3, 5, 0]), [1, 3, 2, 0, 4]);
        assert!(largest_first(&[]).is_empty());
    }

    #[test]
    fn chars_round_up_to_tokens_like_pi() {
        assert_eq!(chars_to_tokens(0), 0);
        assert_eq!(chars_to_tokens(1), 1);
        assert_eq!(chars_to_tokens(4), 1);
        assert_eq!(chars_to_tokens(5), 2);
    }

    #[test]
    fn an_empty_input_builds_a_report() {
        let report = build(&ContextInputs::default(), &mut no_texts);
        assert_eq!(report.estimate, 0);
        assert!(report.text.contains("Window unknown"), "{}", report.text);
    }
}
