//! Gauge cells and hues.
//!
//! The window bar has ten cells and the composition bars eight. A bar rounds
//! to the nearest cell, so it sits within half a cell of the percentage
//! printed beside it, and a non-zero share always gets one cell (a `0.2%` row
//! still draws one beside its label). A hue names a category — the same one in
//! the composition table and the largest-message list — and never judges: the
//! window gauge's verdict is the only judgement on the screen.

use super::threshold::{Headline, Threshold};
use super::Hue;
use serde::Serialize;

/// Cells of the window bar.
pub const WINDOW_CELLS: u8 = 10;
/// Cells of a composition or largest-message bar.
pub const ROW_CELLS: u8 = 8;
/// Share of the threshold (or of the window without one) from which the gauge warns.
pub const NEAR: f64 = 0.8;

/// `part / whole` as filled cells of `of`: nearest cell, at least one for a
/// non-zero part, never more than `of`.
pub fn cells(part: u64, whole: u64, of: u8) -> u8 {
    if part == 0 || whole == 0 {
        return 0;
    }
    let exact = part as f64 / whole as f64 * f64::from(of);
    // `max` then `min`, not `clamp`: `clamp` can panic, and its message
    // formats floats with `core::fmt`'s float code (kilobytes of the `.wasm`).
    exact.round().max(1.0).min(f64::from(of)) as u8
}

/// Whether a row's one cell is drawn thin (`▏`): a share under half a cell
/// (`percent` of the whole) has not earned a full block.
pub fn thin(cells: u8, percent: f64, of: u8) -> bool {
    cells == 1 && of > 0 && percent < 50.0 / f64::from(of)
}

/// The rows' bars explained, under the composition table.
pub const BARS_LEGEND: &str = "Bars here and below: █ an eighth of the context each, ▏ under a sixteenth";

/// The hue of a composition bucket id; a child row is faint, an unknown or
/// neutral category reads neutral rather than borrowing a hue.
pub fn hue_of(id: &str, depth: u8) -> Hue {
    if depth > 0 {
        return Hue::Faint;
    }
    match id {
        "system" => Hue::Hue1,
        "tools" => Hue::Hue2,
        "user" => Hue::Hue3,
        "assistant" => Hue::Hue4,
        "toolResults" => Hue::Hue5,
        _ => Hue::Meta,
    }
}

/// The window bar.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowGauge {
    pub filled: u8,
    pub of: u8,
    /// The cell where the compaction threshold falls, when one is in effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub threshold_cell: Option<u8>,
    /// What the bar measures: Pi's total, or the composition estimate while the total is pending.
    pub basis: GaugeBasis,
    pub verdict: Verdict,
}

/// What the window bar is filled from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum GaugeBasis {
    Host,
    Estimate,
    None,
}

/// The one judgement on the screen.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// Well below the threshold (or the window).
    Ok,
    /// At least [`NEAR`] of the way there.
    Near,
    /// Past the threshold: Pi compacts before the next response.
    Over,
    /// No total or no window.
    Unknown,
}

/// The window bar for this headline and threshold; `estimate` fills it while the total is pending.
pub fn window(headline: &Headline, threshold: &Threshold, estimate: u64) -> WindowGauge {
    let Some(window) = headline.window else {
        return WindowGauge {
            filled: 0,
            of: WINDOW_CELLS,
            threshold_cell: None,
            basis: GaugeBasis::None,
            verdict: Verdict::Unknown,
        };
    };
    let (used, basis) = match headline.tokens {
        Some(t) => (t, GaugeBasis::Host),
        None => (estimate, GaugeBasis::Estimate),
    };
    let threshold_cell = threshold.at.map(|at| cells(at, window, WINDOW_CELLS).max(1));
    let verdict = match (basis, threshold.at) {
        (GaugeBasis::Estimate, _) => Verdict::Unknown,
        (_, Some(at)) if used > at => Verdict::Over,
        (_, Some(at)) if used as f64 >= at as f64 * NEAR => Verdict::Near,
        (_, Some(_)) => Verdict::Ok,
        (_, None) if used >= window => Verdict::Over,
        (_, None) if used as f64 >= window as f64 * NEAR => Verdict::Near,
        (_, None) => Verdict::Ok,
    };
    WindowGauge { filled: cells(used, window, WINDOW_CELLS), of: WINDOW_CELLS, threshold_cell, basis, verdict }
}

#[cfg(test)]
mod tests {
    use super::super::threshold::{resolve, WindowSource};
    use super::super::{CompactionInputs, HostUsage};
    use super::*;

    #[test]
    fn cells_round_to_the_nearest_and_never_hide_a_share() {
        assert_eq!(cells(0, 100, 8), 0);
        assert_eq!(cells(5, 0, 8), 0);
        assert_eq!(cells(1, 500, 8), 1, "0.2% still draws one cell");
        assert_eq!(cells(50, 100, 8), 4);
        assert_eq!(cells(6, 100, 8), 1);
        assert_eq!(cells(7, 100, 8), 1, "0.56 cells rounds to one");
        assert_eq!(cells(19, 100, 8), 2, "1.52 cells rounds to two");
        assert_eq!(cells(100, 100, 8), 8);
        assert_eq!(cells(300, 100, 10), 10);
        assert_eq!(cells(u64::MAX, 1, 10), 10);
        for part in 1..=1000u64 {
            let c = cells(part, 1000, 8);
            let exact = part as f64 / 1000.0 * 8.0;
            assert!((f64::from(c) - exact).abs() <= 0.5 || (c == 1 && exact < 0.5), "{part}");
        }
    }

    #[test]
    fn the_five_categories_have_hues_and_everything_else_is_neutral() {
        assert_eq!(hue_of("system", 0), Hue::Hue1);
        assert_eq!(hue_of("tools", 0), Hue::Hue2);
        assert_eq!(hue_of("user", 0), Hue::Hue3);
        assert_eq!(hue_of("assistant", 0), Hue::Hue4);
        assert_eq!(hue_of("toolResults", 0), Hue::Hue5);
        assert_eq!(hue_of("custom", 0), Hue::Meta);
        assert_eq!(hue_of("shell", 0), Hue::Meta);
        assert_eq!(hue_of("role:new", 0), Hue::Meta);
        assert_eq!(hue_of("custom:x", 1), Hue::Faint);
    }

    fn gauge(tokens: Option<f64>, enabled: bool) -> WindowGauge {
        let usage = HostUsage { tokens, context_window: Some(100_000.0), percent: None };
        let h = super::super::threshold::headline(Some(&usage), None);
        assert_eq!(h.window_source, WindowSource::Usage);
        let settings = serde_json::json!({ "enabled": enabled, "reserveTokens": 20000 });
        let t = resolve(&h, None, &CompactionInputs { settings: Some(settings), ..Default::default() });
        window(&h, &t, 1234)
    }

    #[test]
    fn the_window_gauge_judges_against_the_threshold() {
        let ok = gauge(Some(10_000.0), true);
        assert_eq!((ok.filled, ok.threshold_cell, ok.verdict), (1, Some(8), Verdict::Ok));
        assert_eq!(gauge(Some(64_000.0), true).verdict, Verdict::Near);
        assert_eq!(gauge(Some(80_001.0), true).verdict, Verdict::Over);
        let off = gauge(Some(85_000.0), false);
        assert_eq!((off.threshold_cell, off.verdict), (None, Verdict::Near));
        assert_eq!(gauge(Some(100_000.0), false).verdict, Verdict::Over);
    }

    #[test]
    fn a_pending_total_fills_from_the_estimate_without_a_verdict() {
        let g = gauge(None, true);
        assert_eq!((g.basis, g.verdict, g.filled), (GaugeBasis::Estimate, Verdict::Unknown, 1));
    }
}
