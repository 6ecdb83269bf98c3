//! Distill before compacting (issue 9): at a `turn_end`, whether Pi is about to
//! compact, and whether a checkpoint's edits keep it from doing so.
//!
//! Pi decides on threshold compaction right after a turn's drafts are
//! committed, from its own estimate of the projected context (the extension
//! predicts it with Pi's `estimateTokens`; see `extension/guard/compaction.ts`),
//! strictly above `window - reserve` (the base's [`context_guard_base::compaction`], the
//! same threshold `/context` shows). Past it, compaction rewrites the whole
//! conversation into a summary anyway, so a checkpoint then runs with no age
//! gate and no break-even over every eligible output. Its edits are appended
//! only when Pi's estimate with them applied is at or under the threshold;
//! otherwise nothing is appended and Pi compacts exactly as it would have
//! (edits that save too little would cost a rewrite and a compaction both).
//!
//! A judge takes turns to answer (issue 27: nobody waits for it), so the
//! same checkpoint starts early, in the background, once the estimate is
//! expected to pass the threshold within the turns its answers take to land
//! and one more: the estimate's growth a turn is the median of the last few
//! turns' ([`Ahead`]). Its edits land at a `turn_end` before the crossing
//! and take the estimate down; the check past the threshold stays for
//! growth that jumps (one huge output) or a judge slower than expected.
//!
//! For: that decision and its one line for `/guard`. Not for: the estimate
//! (host arithmetic over Pi's own function) or the checkpoint itself.

use serde::Serialize;
use serde_json::Value;

use crate::read::Fields;
use crate::text::{sanitize_line, short_count};
use context_guard_base::compaction;

/// What the extension read at this `turn_end`.
#[derive(Debug, Clone, Default)]
pub struct CompactionInput {
    /// The `contextWindow` of the model Pi checks with; 0 or absent: Pi never compacts.
    pub window: Option<f64>,
    /// `provider/id`, the key of `compaction.modelOverrides`.
    pub model_key: Option<String>,
    /// `pi.getSettings().compaction`, any shape.
    pub settings: Value,
    /// `DEFAULT_COMPACTION_SETTINGS.enabled` and `.reserveTokens` of the running Pi.
    pub default_enabled: bool,
    pub default_reserve: f64,
    /// Pi's estimate of the context after this turn, as it stands.
    pub tokens: f64,
    /// The checkpoint's result, once it ran.
    pub distilled: Option<Distilled>,
    /// For starting early: how the estimate grows and how long the judge takes.
    pub ahead: Option<Ahead>,
}

/// What starting early weighs, read at this `turn_end`.
#[derive(Debug, Clone, Default)]
pub struct Ahead {
    /// Pi's estimate at the last few `turn_end`s before this one, oldest first.
    pub earlier: Vec<f64>,
    /// Turns a checkpoint planned now takes to land (the judge's time over a turn's, at least 1).
    pub lag: f64,
}

/// Turns of growth read from the estimates: the median of the last this many.
const GROWTH_TURNS: usize = 3;

/// The furthest ahead the growth is carried, in turns of the judge's lag: further is a guess (with turns
/// of milliseconds, as a scripted model's, a judge's second is a hundred turns). A judge slower than that
/// lands after the crossing, where the check past the threshold waits for it.
const MAX_LAG_TURNS: f64 = 5.0;

impl Ahead {
    /// The estimate's growth a turn: the median rise over the last [`GROWTH_TURNS`] turns (a fall counts
    /// as none; of two, the smaller), so that one huge output, or the fall an edit makes, does not set it.
    fn growth(&self, now: f64) -> f64 {
        let mut all = self.earlier.clone();
        all.push(now);
        let from = all.len().saturating_sub(GROWTH_TURNS + 1);
        let rises: Vec<f64> =
            all[from..].windows(2).map(|w| w[1] - w[0]).filter(|d| d.is_finite()).map(|d| d.max(0.0)).collect();
        match rises[..] {
            [a, b, c] => a.min(b).max(a.max(b).min(c)),
            [a, b] => a.min(b),
            [a] => a,
            _ => 0.0,
        }
    }
}

/// What the no-gate checkpoint gave.
#[derive(Debug, Clone, Default)]
pub struct Distilled {
    /// Pi's estimate with the edits applied.
    pub tokens: f64,
    /// Outputs the edits replace.
    pub outputs: usize,
    /// Why the checkpoint gave no edits (`timeout`, `error`, `kept everything`, …).
    pub problem: Option<String>,
}

impl CompactionInput {
    pub fn from_value(v: Value) -> CompactionInput {
        let mut f = Fields::of(v);
        let mut defaults = Fields::of(f.take("defaults"));
        let distilled = match f.take("distilled") {
            Value::Null => None,
            d => {
                let mut d = Fields::of(d);
                Some(Distilled {
                    tokens: d.number("tokens").unwrap_or(f64::INFINITY),
                    outputs: d.count("outputs"),
                    problem: d.opt_string("problem"),
                })
            }
        };
        CompactionInput {
            window: f.number("window"),
            model_key: f.opt_string("model"),
            settings: f.take("settings"),
            default_enabled: defaults.take("enabled").as_bool().unwrap_or(true),
            default_reserve: defaults.number("reserveTokens").unwrap_or(16_384.0),
            tokens: f.number("tokens").unwrap_or(0.0),
            distilled,
            ahead: match f.take("ahead") {
                Value::Null => None,
                a => {
                    let mut a = Fields::of(a);
                    let earlier = match a.take("earlier") {
                        Value::Array(xs) => xs.iter().filter_map(Value::as_f64).collect(),
                        _ => Vec::new(),
                    };
                    Some(Ahead { earlier, lag: a.number("lag").unwrap_or(1.0).max(1.0) })
                }
            },
        }
    }
}

crate::deserialize_via_value!(CompactionInput);

/// What the extension does next.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "CompactionAction"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// Pi will not compact (or cannot: compaction off, no window): nothing to do here.
    None,
    /// Pi is about to compact: run the checkpoint with no gate, then ask again.
    Distill,
    /// Pi is expected to compact before a judge asked now would answer and one more turn: start the
    /// checkpoint with no gate in the background now.
    Early,
    /// The edits keep Pi at or under the threshold: append them.
    Append,
    /// They do not (or there are none): append nothing; Pi compacts.
    Compact,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "CompactionDecision"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub action: Action,
    /// `window - reserve`, when a threshold is in effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub threshold: Option<u64>,
    /// The line `/guard` shows, when there is something to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub line: Option<String>,
}

/// A token estimate as a whole number (Pi's are whole; anything odd reads as 0).
fn whole(t: f64) -> u64 {
    if t.is_finite() && t > 0.0 {
        t.round() as u64
    } else {
        0
    }
}

fn count(t: u64) -> String {
    short_count(usize::try_from(t).unwrap_or(usize::MAX))
}

/// Whether Pi compacts after this turn, and what the checkpoint's edits change.
pub fn decide(input: &CompactionInput) -> Decision {
    let none = |line: Option<String>| Decision { action: Action::None, threshold: None, line };
    let settings = input.settings.as_object();
    if !compaction::enabled(settings, input.default_enabled) {
        return none(None);
    }
    let window = input.window.map(whole).unwrap_or(0);
    if window == 0 {
        return none(None);
    }
    let reserve = match compaction::reserve(settings, input.model_key.as_deref(), whole(input.default_reserve)) {
        Ok((r, _)) => r,
        Err(problem) => {
            return none(Some(format!("before Pi compacts: not checked, {}", sanitize_line(&problem, 160))))
        }
    };
    let at = compaction::threshold(window, reserve);
    let tokens = whole(input.tokens);
    if !compaction::compacts(tokens, at) {
        return early(input, tokens, at);
    }
    let past = format!("before Pi compacts: its estimate {} > threshold {}", count(tokens), count(at));
    let Some(d) = &input.distilled else {
        return Decision { action: Action::Distill, threshold: Some(at), line: None };
    };
    let (action, rest) = match &d.problem {
        Some(problem) => (Action::Compact, format!("the checkpoint gave no edits ({})", sanitize_line(problem, 80))),
        None if d.outputs == 0 => (Action::Compact, "the checkpoint gave no edits".to_string()),
        None => {
            let after = if d.tokens.is_finite() { whole(d.tokens) } else { u64::MAX };
            if compaction::compacts(after, at) {
                (Action::Compact, format!("distilled it would still be {}", count(after)))
            } else {
                let s = if d.outputs == 1 { "" } else { "s" };
                (Action::Append, format!("{} output{s} distilled → {}", d.outputs, count(after)))
            }
        }
    };
    let outcome = match action {
        Action::Append => "Pi does not compact",
        _ => "nothing is appended and Pi compacts",
    };
    Decision { action, threshold: Some(at), line: Some(format!("{past}; {rest}, so {outcome}")) }
}

/// Under the threshold: [`Action::Early`] when the estimate, growing as it did, is expected to pass it
/// within the turns the judge's answers take to land and one more; else nothing.
fn early(input: &CompactionInput, tokens: u64, at: u64) -> Decision {
    let nothing = Decision { action: Action::None, threshold: Some(at), line: None };
    let Some(ahead) = &input.ahead else { return nothing };
    let growth = ahead.growth(input.tokens);
    let lag = ahead.lag.ceil().clamp(1.0, MAX_LAG_TURNS);
    let turns = lag + 1.0;
    let expected = tokens as f64 + growth * turns;
    if growth <= 0.0 || !compaction::compacts(whole(expected), at) {
        return nothing;
    }
    let line = format!(
        "before Pi compacts: its estimate {} grows ~{} a turn and would pass threshold {} within {} turns, \
         the judge's answers take {}: judging began early",
        count(tokens),
        count(whole(growth)),
        count(at),
        turns as u64,
        if lag <= 1.0 { "1 turn".to_string() } else { format!("{} turns", lag as u64) },
    );
    Decision { action: Action::Early, threshold: Some(at), line: Some(line) }
}

/// The decision from the JSON text of a [`CompactionInput`].
pub fn decide_json(input: &str) -> Result<String, String> {
    let input =
        crate::read::from_json(input, CompactionInput::from_value).map_err(|e| format!("compaction input: {e}"))?;
    serde_json::to_string(&decide(&input)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(tokens: f64, distilled: Option<Distilled>) -> CompactionInput {
        CompactionInput {
            window: Some(200_000.0),
            model_key: Some("faux/faux-1".into()),
            settings: json!({}),
            default_enabled: true,
            default_reserve: 16_384.0,
            tokens,
            distilled,
            ahead: None,
        }
    }

    fn distilled(tokens: f64, outputs: usize) -> Option<Distilled> {
        Some(Distilled { tokens, outputs, problem: None })
    }

    #[test]
    fn at_the_threshold_pi_does_not_compact_and_nothing_runs() {
        // 200,000 - 16,384 = 183,616: Pi compacts strictly above it.
        let d = decide(&input(183_616.0, None));
        assert_eq!((d.action, d.threshold, d.line), (Action::None, Some(183_616), None));
        assert_eq!(decide(&input(183_617.0, None)).action, Action::Distill);
    }

    #[test]
    fn edits_that_bring_it_to_the_threshold_are_appended() {
        let d = decide(&input(205_120.0, distilled(183_616.0, 2)));
        assert_eq!(d.action, Action::Append);
        assert_eq!(
            d.line.as_deref(),
            Some("before Pi compacts: its estimate 205.1k > threshold 183.6k; 2 outputs distilled → 183.6k, so Pi does not compact")
        );
    }

    #[test]
    fn edits_that_leave_it_above_are_not() {
        let d = decide(&input(205_120.0, distilled(183_617.0, 1)));
        assert_eq!(d.action, Action::Compact);
        assert_eq!(
            d.line.as_deref(),
            Some("before Pi compacts: its estimate 205.1k > threshold 183.6k; distilled it would still be 183.6k, so nothing is appended and Pi compacts")
        );
        let failed =
            decide(&input(205_120.0, Some(Distilled { tokens: 10.0, outputs: 2, problem: Some("timeout".into()) })));
        assert_eq!(failed.action, Action::Compact);
        assert!(failed.line.unwrap().contains("the checkpoint gave no edits (timeout), so nothing is appended"));
        assert_eq!(decide(&input(205_120.0, distilled(10.0, 0))).action, Action::Compact);
    }

    #[test]
    fn the_reserve_is_pis_three_steps() {
        let mut i = input(160_000.0, None);
        i.settings = json!({ "reserveTokens": 30000, "modelOverrides": { "faux/faux-1": { "reserveTokens": 50000 } } });
        assert_eq!(decide(&i).threshold, Some(150_000));
        assert_eq!(decide(&i).action, Action::Distill);
        i.settings = json!({ "reserveTokens": 30000 });
        assert_eq!(decide(&i).action, Action::None);
        i.settings = json!({ "reserveTokens": -1 });
        let bad = decide(&i);
        assert_eq!(bad.action, Action::None);
        assert!(bad.line.unwrap().contains("compaction.reserveTokens is -1"));
    }

    #[test]
    fn no_threshold_no_action() {
        let mut off = input(500_000.0, None);
        off.settings = json!({ "enabled": false });
        assert_eq!(decide(&off), Decision { action: Action::None, threshold: None, line: None });
        let mut no_window = input(500_000.0, None);
        no_window.window = Some(0.0);
        assert_eq!(decide(&no_window).action, Action::None);
        no_window.window = None;
        assert_eq!(decide(&no_window).action, Action::None);
    }

    fn ahead(tokens: f64, earlier: &[f64], lag: f64) -> CompactionInput {
        CompactionInput { ahead: Some(Ahead { earlier: earlier.to_vec(), lag }), ..input(tokens, None) }
    }

    #[test]
    fn starts_early_when_the_crossing_is_due_within_the_judges_turns_and_one() {
        // 25k a turn, the judge 2 turns: 110k + 3 × 25k = 185k > 183,616 starts; 105k + 75k does not.
        let d = decide(&ahead(110_000.0, &[60_000.0, 85_000.0], 2.0));
        assert_eq!(d.action, Action::Early);
        assert_eq!(
            d.line.as_deref(),
            Some(
                "before Pi compacts: its estimate 110.0k grows ~25.0k a turn and would pass threshold 183.6k \
                 within 3 turns, the judge's answers take 2 turns: judging began early"
            )
        );
        assert_eq!(decide(&ahead(105_000.0, &[55_000.0, 80_000.0], 2.0)).action, Action::None);
        // The median of the last three rises counts: not an older one, not one jump, not a fall.
        assert_eq!(decide(&ahead(150_000.0, &[10_000.0, 140_000.0, 141_000.0, 149_000.0], 1.0)).action, Action::None);
        assert_eq!(decide(&ahead(150_000.0, &[130_000.0, 148_000.0, 149_000.0], 1.0)).action, Action::None);
        assert_eq!(decide(&ahead(150_000.0, &[110_000.0, 128_000.0, 140_000.0], 2.0)).action, Action::Early);
        assert_eq!(decide(&ahead(150_000.0, &[200_000.0, 160_000.0], 3.0)).action, Action::None);
        // An edit's fall and one huge output before it: neither sets the growth.
        assert_eq!(decide(&ahead(60_000.0, &[90_000.0, 200_000.0, 50_000.0], 3.0)).action, Action::None);
        // No history, a fraction of a turn, nonsense: read safely.
        assert_eq!(decide(&ahead(183_000.0, &[], 1.0)).action, Action::None);
        assert_eq!(decide(&ahead(170_000.0, &[f64::NAN, 160_000.0], 0.2)).action, Action::Early);
        // A judge of a hundred turns is carried 5 turns ahead (6 with the margin).
        assert_eq!(decide(&ahead(20_000.0, &[10_000.0, 15_000.0], 150.0)).action, Action::None);
        let far = decide(&ahead(160_000.0, &[150_000.0, 155_000.0], 150.0));
        assert_eq!(far.action, Action::Early);
        assert!(far.line.unwrap().contains("within 6 turns, the judge's answers take 5 turns"));
        // Past the threshold the checkpoint runs now, as before.
        assert_eq!(decide(&ahead(190_000.0, &[160_000.0], 2.0)).action, Action::Distill);
    }

    #[test]
    fn reads_the_extensions_json() {
        let text = json!({ "window": 200000, "model": "faux/faux-1", "settings": null,
            "defaults": { "enabled": true, "reserveTokens": 16384 }, "tokens": 190000,
            "distilled": { "tokens": 20000, "outputs": 2 } })
        .to_string();
        let out: Value = serde_json::from_str(&decide_json(&text).unwrap()).unwrap();
        assert_eq!(out["action"], "append");
        assert_eq!(out["threshold"], 183_616);
        // A missing estimate after the checkpoint never reads as "under".
        let text = json!({ "window": 200000, "tokens": 190000, "distilled": { "outputs": 2 } }).to_string();
        let out: Value = serde_json::from_str(&decide_json(&text).unwrap()).unwrap();
        assert_eq!(out["action"], "compact");
        let text =
            json!({ "window": 200000, "tokens": 170000, "ahead": { "earlier": [160000, "x"], "lag": -3 } }).to_string();
        let out: Value = serde_json::from_str(&decide_json(&text).unwrap()).unwrap();
        assert_eq!(out["action"], "early");
        assert!(decide_json("[").is_err());
    }
}
