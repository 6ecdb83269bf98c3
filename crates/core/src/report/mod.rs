//! The `/context` report: where the context window goes.
//!
//! The extension reads Pi once per open or refresh (usage, system prompt, active
//! tools, compaction settings, the projected messages with Pi's own per-message
//! `estimateTokens`, the compaction history) and hands it here as
//! [`ContextInputs`]. [`build`] returns the whole [`ContextReport`]: the
//! headline and threshold, the composition rows, the drift between Pi's total
//! and the composition, the compaction history, the five largest messages, the
//! gauge cells with their hues, and the plain-text report for non-TUI modes.
//! The screen only slices and paints it.
//!
//! Each concept is its own module: [`composition`], [`threshold`], [`drift`],
//! [`history`], [`largest`], [`gauge`], [`text`].

pub mod composition;
pub mod drift;
pub mod gauge;
pub mod history;
pub mod largest;
pub mod text;
pub mod threshold;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The largest integer JavaScript holds exactly. Every count leaving the core
/// is capped here so the wasm boundary always produces a plain number.
pub const MAX_SAFE: u64 = (1 << 53) - 1;

/// Everything the report needs from one read of Pi.
///
/// A later "guard" section (what the guard keeps out of the window) is meant to
/// arrive as one more optional field here and one more optional section in
/// [`ContextReport`]; nothing else changes shape.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ContextInputs {
    /// `ctx.getContextUsage()`, absent when Pi has no model or no window.
    pub usage: Option<HostUsage>,
    /// The active model (`ctx.model`).
    pub model: Option<ModelRef>,
    /// `ctx.getSystemPrompt()`, counted when the projection holds no system message.
    pub system_prompt: String,
    /// The active tools (`pi.getAllTools()` filtered to `pi.getActiveTools()`).
    pub tools: Vec<ToolDigest>,
    /// The compaction settings as Pi holds them, and Pi's built-in defaults.
    pub compaction: CompactionInputs,
    /// `sessionManager.buildSessionProjection().messages`, one digest each, in order.
    pub messages: Vec<MessageDigest>,
    /// The branch's compaction entries.
    pub history: HistoryInputs,
    /// Pi's `tokensBefore` of a compaction that just finished, to report its effect.
    pub compacted_from: Option<f64>,
}

/// Pi's own figures for the window.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HostUsage {
    /// `null` between a compaction and the next successful reply.
    pub tokens: Option<f64>,
    pub context_window: Option<f64>,
    pub percent: Option<f64>,
}

/// The active model, as far as the report needs it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ModelRef {
    pub provider: String,
    pub id: String,
    pub context_window: Option<f64>,
}

/// One active tool definition. `parameters` is its schema as JSON text.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ToolDigest {
    pub name: String,
    pub description: String,
    pub parameters: String,
}

/// `pi.getSettings().compaction` (any shape: it is validated here) and
/// `DEFAULT_COMPACTION_SETTINGS` from the running Pi.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CompactionInputs {
    pub settings: Option<serde_json::Value>,
    pub defaults: CompactionDefaults,
}

/// Pi's built-in compaction defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CompactionDefaults {
    pub enabled: bool,
    #[serde(deserialize_with = "lenient_number")]
    pub reserve_tokens: f64,
}

impl Default for CompactionDefaults {
    /// Pi's values (1.3.0 to 1.6.0), used only when the extension could not read them.
    fn default() -> Self {
        Self { enabled: true, reserve_tokens: 16_384.0 }
    }
}

/// One projected message, reduced to what the report needs: Pi's token count
/// and a few short strings for its descriptor, never its whole content.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MessageDigest {
    pub role: String,
    /// Pi's `estimateTokens(message)`.
    #[serde(deserialize_with = "lenient_number")]
    pub tokens: f64,
    pub custom_type: Option<String>,
    /// A tool result's tool, or the first tool an assistant message calls.
    pub tool_name: Option<String>,
    /// A shell execution's command (its start).
    pub command: Option<String>,
    /// The start of the message's first text.
    pub text: Option<String>,
    /// A system message's prompt parts, replayed in order into the current prompt.
    pub system: Option<SystemDigest>,
}

/// The prompt parts of one system message (its tool declarations are counted
/// in the tools row instead).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SystemDigest {
    pub content: String,
    /// Named sections; `None` removes a section set by an earlier message.
    pub sections: BTreeMap<String, Option<String>>,
}

/// The branch's compactions.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
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
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LatestCompaction {
    #[serde(deserialize_with = "lenient_number")]
    pub tokens_before: f64,
    pub summary: String,
}

/// The colour family of a row. A hue identifies a category; it never judges.
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
    pub largest: Vec<largest::Largest>,
    /// Each projected message's count as the report used it (Pi's
    /// `estimateTokens`, made whole), in projection order.
    pub counts: Vec<u64>,
    /// The effect of a compaction that just finished (`compacted_from`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compacted: Option<history::Compacted>,
    /// The report's sentences, shared by the screen and the text.
    pub sentences: text::Sentences,
    /// The plain-text report, for every mode but the TUI.
    pub text: String,
}

/// Builds the report from one read of Pi.
pub fn build(inputs: &ContextInputs) -> ContextReport {
    let headline = threshold::headline(inputs.usage.as_ref(), inputs.model.as_ref());
    let threshold = threshold::resolve(&headline, inputs.model.as_ref(), &inputs.compaction);
    let (rows, estimate) = composition::rows(inputs);
    let window_gauge = gauge::window(&headline, &threshold, estimate);
    let drift = drift::drift(headline.tokens, estimate, &inputs.messages);
    let history = history::history(&inputs.history, &inputs.messages, &rows);
    let largest = largest::largest(&inputs.messages, estimate);
    let compacted = inputs.compacted_from.map(|before| history::compacted(before, headline.tokens, estimate));
    let mut report = ContextReport {
        headline,
        threshold,
        window_gauge,
        estimate,
        rows,
        drift,
        history,
        largest,
        counts: inputs.messages.iter().map(|m| whole_tokens(m.tokens)).collect(),
        compacted,
        sentences: text::Sentences::default(),
        text: String::new(),
    };
    report.sentences = text::sentences(&report);
    report.text = text::render(&report);
    report
}

/// [`build`] over the JSON text of [`ContextInputs`], returning the JSON text
/// of [`ContextReport`].
///
/// This is the form the extension calls: for a 5,000-message session, one
/// `JSON.stringify` and one `JSON.parse` on the JavaScript side cost a
/// fraction of converting thousands of small objects field by field across
/// the wasm boundary (measured in `tests/bench/report.bench.ts`).
pub fn build_json(inputs: &str) -> Result<String, String> {
    let inputs: ContextInputs = serde_json::from_str(inputs).map_err(|e| format!("context inputs: {e}"))?;
    serde_json::to_string(&build(&inputs)).map_err(|e| format!("context report: {e}"))
}

/// A number that JSON may carry as `null` (JavaScript's `NaN` and infinities
/// stringify to `null`): read as NaN, which [`whole_tokens`] turns into 0.
fn lenient_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
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

    #[test]
    fn the_json_form_reads_nulls_as_unknown_and_rejects_garbage() {
        let out =
            build_json(r#"{"usage":{"tokens":null,"contextWindow":1000},"messages":[{"role":"user","tokens":null}]}"#)
                .expect("a report");
        assert!(out.contains(r#""pending":true"#), "{out}");
        assert!(build_json("not json").unwrap_or_default().is_empty());
        assert!(build_json(r#"{"messages":[{"role":5}]}"#).is_err());
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
        let report = build(&ContextInputs::default());
        assert_eq!(report.estimate, 0);
        assert!(report.text.contains("Window unknown"), "{}", report.text);
    }
}
