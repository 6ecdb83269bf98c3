//! Base: Pi's automatic compaction threshold, the one rule both parts use:
//! `/context` shows it, the guard distills before Pi passes it.
//!
//! The reserve is resolved with the same three steps Pi uses
//! (`SettingsManager.getCompactionTokenSetting`):
//! `compaction.modelOverrides["provider/id"].reserveTokens`, then
//! `compaction.reserveTokens`, then `DEFAULT_COMPACTION_SETTINGS.reserveTokens`.
//! Pi rejects a value that is not a non-negative safe integer (and an override
//! entry that is not an object), and checks the ordinary value even when an
//! override wins; so does [`reserve`], which then says why instead of
//! guessing. Pi compacts when `tokens > window - reserve` (`shouldCompact`),
//! strictly above: [`compacts`].

use serde::Serialize;
use serde_json::{Map, Value};

/// `Number.MAX_SAFE_INTEGER`: the largest whole number Pi accepts as a token setting.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Which of the three steps gave the reserve.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ReserveSource {
    ModelOverride,
    Settings,
    Default,
}

/// A token setting Pi accepts: a non-negative safe integer.
fn token_setting(v: &Value) -> Option<u64> {
    let n = v.as_f64()?;
    (n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= MAX_SAFE_INTEGER as f64).then_some(n as u64)
}

/// `compaction.enabled`, else Pi's default.
pub fn enabled(compaction: Option<&Map<String, Value>>, default: bool) -> bool {
    compaction.and_then(|c| c.get("enabled")).and_then(Value::as_bool).unwrap_or(default)
}

/// The reserve by Pi's three steps, or why it cannot be read. `compaction` is
/// `pi.getSettings().compaction` (any other shape reads as absent),
/// `model_key` is `provider/id`, `default` Pi's own default.
pub fn reserve(
    compaction: Option<&Map<String, Value>>,
    model_key: Option<&str>,
    default: u64,
) -> Result<(u64, ReserveSource), String> {
    let ordinary = match compaction.and_then(|c| c.get("reserveTokens")) {
        None => None,
        Some(v) => Some(
            token_setting(v)
                .ok_or_else(|| format!("compaction.reserveTokens is {v}, not a non-negative whole number"))?,
        ),
    };
    let entry = match (compaction.and_then(|c| c.get("modelOverrides")).and_then(Value::as_object), model_key) {
        (Some(overrides), Some(key)) => overrides.get(key),
        _ => None,
    };
    let key = model_key.unwrap_or_default();
    let overridden = match entry {
        None => None,
        Some(Value::Object(entry)) => match entry.get("reserveTokens") {
            None => None,
            Some(v) => Some(token_setting(v).ok_or_else(|| {
                format!("compaction.modelOverrides[\"{key}\"].reserveTokens is {v}, not a non-negative whole number")
            })?),
        },
        Some(other) => return Err(format!("compaction.modelOverrides[\"{key}\"] is {other}, not an object")),
    };
    Ok(match (overridden, ordinary) {
        (Some(r), _) => (r, ReserveSource::ModelOverride),
        (None, Some(r)) => (r, ReserveSource::Settings),
        (None, None) => (default, ReserveSource::Default),
    })
}

/// `window - reserve`: the most tokens Pi lets the context reach without compacting.
pub fn threshold(window: u64, reserve: u64) -> u64 {
    window.saturating_sub(reserve)
}

/// Whether Pi compacts at this estimate: strictly above the threshold.
pub fn compacts(tokens: u64, threshold: u64) -> bool {
    tokens > threshold
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resolve(settings: Value) -> Result<(u64, ReserveSource), String> {
        reserve(settings.as_object(), Some("faux/faux-1"), 16_384)
    }

    #[test]
    fn reserve_falls_back_from_override_to_settings_to_default() {
        let both = json!({ "reserveTokens": 30000, "modelOverrides": { "faux/faux-1": { "reserveTokens": 50000 } } });
        assert_eq!(resolve(both), Ok((50_000, ReserveSource::ModelOverride)));
        let other = json!({ "reserveTokens": 30000, "modelOverrides": { "x/y": { "reserveTokens": 1 } } });
        assert_eq!(resolve(other), Ok((30_000, ReserveSource::Settings)));
        assert_eq!(resolve(json!({})), Ok((16_384, ReserveSource::Default)));
        assert_eq!(reserve(None, None, 7), Ok((7, ReserveSource::Default)));
    }

    #[test]
    fn settings_pi_would_reject_say_why() {
        let bad = resolve(json!({ "reserveTokens": "x", "modelOverrides": { "faux/faux-1": { "reserveTokens": 5 } } }));
        assert_eq!(bad, Err("compaction.reserveTokens is \"x\", not a non-negative whole number".to_string()));
        let entry = resolve(json!({ "modelOverrides": { "faux/faux-1": 7 } }));
        assert_eq!(entry, Err("compaction.modelOverrides[\"faux/faux-1\"] is 7, not an object".to_string()));
        assert!(resolve(json!({ "reserveTokens": 9007199254740992.0 })).is_err());
        assert!(resolve(json!({ "reserveTokens": 9007199254740991u64 })).is_ok());
    }

    #[test]
    fn pi_compacts_strictly_above_the_threshold() {
        let at = threshold(200_000, 16_384);
        assert_eq!(at, 183_616);
        assert!(!compacts(183_616, at));
        assert!(compacts(183_617, at));
        assert_eq!(threshold(10, 500), 0);
        assert!(enabled(None, true));
        assert!(!enabled(json!({ "enabled": false }).as_object(), true));
        assert!(enabled(json!({ "enabled": "no" }).as_object(), true));
    }
}
