//! The headline (Pi's own total, the window, free space) and the automatic
//! compaction threshold with the headroom left before it.
//!
//! The threshold is the base's (`context_guard_base::compaction`: Pi's three-step reserve,
//! `window - reserve`), which the guard reads too; a setting Pi would reject
//! shows no threshold rather than a guessed one.

use super::{whole_tokens, CompactionInputs, HostUsage, ModelRef};
use context_guard_base::compaction;
pub use context_guard_base::compaction::ReserveSource;
use serde::Serialize;
use serde_json::Value;

/// Pi's own estimate of the window.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Headline {
    /// Pi's total; `None` while pending or when Pi gives none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub window: Option<u64>,
    pub window_source: WindowSource,
    /// Unrounded; shown to one decimal.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub free: Option<u64>,
    /// Pi knows the window but not the total: the moments between a
    /// compaction and the next successful reply.
    pub pending: bool,
}

/// Where the window size came from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum WindowSource {
    /// `getContextUsage().contextWindow`.
    Usage,
    /// The active model's `contextWindow`.
    Model,
    Unknown,
}

/// The automatic compaction threshold.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Threshold {
    pub state: ThresholdState,
    /// `compaction.enabled`, else Pi's default.
    pub enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reserve: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reserve_source: Option<ReserveSource>,
    /// `provider/id` of the active model: the key of `modelOverrides`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub model_key: Option<String>,
    /// `window - reserve`: Pi compacts once the total passes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub at: Option<u64>,
    /// `window - reserve - tokens`; negative past the threshold. `None` while
    /// the total is unknown or no threshold is in effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub headroom: Option<i64>,
    /// Why the settings could not be resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub problem: Option<String>,
}

/// Whether a threshold is in effect.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ThresholdState {
    On,
    /// `compaction.enabled` is false.
    Off,
    /// No window is known, so there is no threshold to show.
    UnknownWindow,
    /// A compaction setting Pi would reject.
    Invalid,
}

fn positive(v: Option<f64>) -> Option<u64> {
    v.map(whole_tokens).filter(|&w| w > 0)
}

/// The headline from `getContextUsage()` and the model.
pub fn headline(usage: Option<&HostUsage>, model: Option<&ModelRef>) -> Headline {
    let from_usage = positive(usage.and_then(|u| u.context_window));
    let from_model = positive(model.and_then(|m| m.context_window));
    let (window, window_source) = match (from_usage, from_model) {
        (Some(w), _) => (Some(w), WindowSource::Usage),
        (None, Some(w)) => (Some(w), WindowSource::Model),
        (None, None) => (None, WindowSource::Unknown),
    };
    let tokens = usage.and_then(|u| u.tokens).filter(|t| t.is_finite() && *t >= 0.0).map(whole_tokens);
    let percent = match (tokens, window) {
        (Some(_), _) if usage.and_then(|u| u.percent).is_some_and(f64::is_finite) => usage.and_then(|u| u.percent),
        (Some(t), Some(w)) => Some(t as f64 * 100.0 / w as f64),
        _ => None,
    };
    let free = match (tokens, window) {
        (Some(t), Some(w)) => Some(w.saturating_sub(t)),
        _ => None,
    };
    Headline { tokens, window, window_source, percent, free, pending: usage.is_some() && tokens.is_none() }
}

/// The threshold in effect for this window, model and settings.
pub fn resolve(headline: &Headline, model: Option<&ModelRef>, inputs: &CompactionInputs) -> Threshold {
    let settings = inputs.settings.as_ref().and_then(Value::as_object);
    let enabled = compaction::enabled(settings, inputs.defaults.enabled);
    let model_key =
        model.filter(|m| !m.provider.is_empty() || !m.id.is_empty()).map(|m| format!("{}/{}", m.provider, m.id));
    let mut out = Threshold {
        state: ThresholdState::On,
        enabled,
        reserve: None,
        reserve_source: None,
        model_key: model_key.clone(),
        at: None,
        headroom: None,
        problem: None,
    };
    match compaction::reserve(settings, model_key.as_deref(), whole_tokens(inputs.defaults.reserve_tokens)) {
        Ok((r, source)) => {
            out.reserve = Some(r);
            out.reserve_source = Some(source);
        }
        Err(problem) => {
            out.state = ThresholdState::Invalid;
            out.problem = Some(problem);
            return out;
        }
    }
    if !enabled {
        out.state = ThresholdState::Off;
        return out;
    }
    let Some(window) = headline.window else {
        out.state = ThresholdState::UnknownWindow;
        return out;
    };
    let at = compaction::threshold(window, out.reserve.unwrap_or(0));
    out.at = Some(at);
    out.headroom = headline.tokens.map(|t| at as i64 - t as i64);
    out
}

#[cfg(test)]
mod tests {
    use super::super::CompactionDefaults;
    use super::*;
    use serde_json::json;

    fn usage(tokens: Option<f64>, window: f64) -> HostUsage {
        HostUsage { tokens, context_window: Some(window), percent: None }
    }

    fn model(window: Option<f64>) -> ModelRef {
        ModelRef { provider: "faux".into(), id: "faux-1".into(), context_window: window }
    }

    fn inputs(settings: Value) -> CompactionInputs {
        CompactionInputs { settings: Some(settings), defaults: CompactionDefaults::default() }
    }

    fn threshold(settings: Value, tokens: Option<f64>) -> Threshold {
        let m = model(Some(200_000.0));
        let h = headline(Some(&usage(tokens, 200_000.0)), Some(&m));
        resolve(&h, Some(&m), &inputs(settings))
    }

    #[test]
    fn headline_reads_pi_and_computes_free_space() {
        let h = headline(Some(&usage(Some(50_000.0), 200_000.0)), None);
        assert_eq!(h.tokens, Some(50_000));
        assert_eq!(h.window, Some(200_000));
        assert_eq!(h.window_source, WindowSource::Usage);
        assert_eq!(h.percent, Some(25.0));
        assert_eq!(h.free, Some(150_000));
        assert!(!h.pending);
    }

    #[test]
    fn headline_prefers_pis_percentage() {
        let u = HostUsage { tokens: Some(10.0), context_window: Some(100.0), percent: Some(10.5) };
        assert_eq!(headline(Some(&u), None).percent, Some(10.5));
    }

    #[test]
    fn a_missing_total_is_pending_not_zero() {
        let h = headline(Some(&usage(None, 200_000.0)), None);
        assert_eq!(h.tokens, None);
        assert!(h.pending);
        assert_eq!(h.free, None);
        let t = resolve(&h, None, &inputs(json!({})));
        assert_eq!(t.at, Some(200_000 - 16_384));
        assert_eq!(t.headroom, None);
    }

    #[test]
    fn the_window_falls_back_to_the_model() {
        let h = headline(None, Some(&model(Some(32_000.0))));
        assert_eq!(h.window, Some(32_000));
        assert_eq!(h.window_source, WindowSource::Model);
        assert!(!h.pending);
    }

    #[test]
    fn an_unknown_window_has_no_threshold() {
        let h = headline(None, Some(&model(None)));
        assert_eq!(h.window_source, WindowSource::Unknown);
        let t = resolve(&h, Some(&model(None)), &inputs(json!({})));
        assert_eq!(t.state, ThresholdState::UnknownWindow);
        assert_eq!(t.at, None);
        assert_eq!(t.headroom, None);
    }

    #[test]
    fn reserve_falls_back_from_override_to_settings_to_default() {
        let over = threshold(
            json!({ "reserveTokens": 30000, "modelOverrides": { "faux/faux-1": { "reserveTokens": 50000 } } }),
            Some(100_000.0),
        );
        assert_eq!((over.reserve, over.reserve_source), (Some(50_000), Some(ReserveSource::ModelOverride)));
        assert_eq!(over.at, Some(150_000));
        assert_eq!(over.headroom, Some(50_000));
        assert_eq!(over.model_key.as_deref(), Some("faux/faux-1"));

        let other_model =
            threshold(json!({ "reserveTokens": 30000, "modelOverrides": { "x/y": { "reserveTokens": 1 } } }), None);
        assert_eq!((other_model.reserve, other_model.reserve_source), (Some(30_000), Some(ReserveSource::Settings)));

        let override_without_reserve = threshold(
            json!({ "reserveTokens": 30000, "modelOverrides": { "faux/faux-1": { "keepRecentTokens": 5 } } }),
            None,
        );
        assert_eq!(override_without_reserve.reserve_source, Some(ReserveSource::Settings));

        let default = threshold(json!({}), Some(190_000.0));
        assert_eq!((default.reserve, default.reserve_source), (Some(16_384), Some(ReserveSource::Default)));
        assert_eq!(default.headroom, Some(200_000 - 16_384 - 190_000));
    }

    #[test]
    fn settings_pi_would_reject_give_no_threshold() {
        for bad in [
            json!({ "reserveTokens": -1 }),
            json!({ "reserveTokens": 1.5 }),
            json!({ "reserveTokens": "many" }),
            json!({ "reserveTokens": null }),
            json!({ "modelOverrides": { "faux/faux-1": 7 } }),
            json!({ "modelOverrides": { "faux/faux-1": { "reserveTokens": -5 } } }),
            // Pi checks the ordinary value even when an override wins.
            json!({ "reserveTokens": "x", "modelOverrides": { "faux/faux-1": { "reserveTokens": 5 } } }),
        ] {
            let t = threshold(bad.clone(), Some(10.0));
            assert_eq!(t.state, ThresholdState::Invalid, "{bad}");
            assert!(t.problem.is_some());
            assert_eq!(t.headroom, None);
        }
    }

    #[test]
    fn disabled_compaction_has_no_threshold() {
        let t = threshold(json!({ "enabled": false }), Some(10.0));
        assert_eq!(t.state, ThresholdState::Off);
        assert!(!t.enabled);
        assert_eq!(t.headroom, None);
    }

    #[test]
    fn a_reserve_larger_than_the_window_puts_the_threshold_at_zero() {
        let t = threshold(json!({ "reserveTokens": 500000 }), Some(10.0));
        assert_eq!(t.at, Some(0));
        assert_eq!(t.headroom, Some(-10));
    }

    #[test]
    fn non_object_settings_are_ignored_like_absent_ones() {
        let t = threshold(json!("nonsense"), Some(0.0));
        assert_eq!(t.reserve_source, Some(ReserveSource::Default));
    }
}
