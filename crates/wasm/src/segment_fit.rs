//! The segment size the classifier's window allows, across the boundary: the
//! settings (as `parseSettings` gave them) and the model's `contextWindow` in,
//! `{ maxSegmentChars, warning? }` out (`guard::segment_fit`).

use context_guard_guard::segment_fit;
use wasm_bindgen::prelude::*;

/// `maxSegmentChars` clipped to what a classifier with `contextWindow` tokens
/// takes, and the warning naming the key when it was (`undefined`: unknown window).
#[wasm_bindgen(js_name = fitSegment)]
pub fn fit_segment(settings: &str, context_window: Option<f64>) -> String {
    segment_fit::fit_json(settings, context_window)
}
