//! The `/context` report across the boundary: one call per open or refresh.

use context_guard_core::report;
use wasm_bindgen::prelude::*;

/// Builds the whole report (rows, drift, history, largest, gauges, text) from
/// one read of Pi: `ContextInputs` as JSON text in, `ContextReport` as JSON
/// text out (see `report::build_json` for why text).
#[wasm_bindgen(js_name = buildReport)]
pub fn build_report(inputs: &str) -> Result<String, JsError> {
    report::build_json(inputs).map_err(|e| JsError::new(&e))
}

/// One line safe to paint on a terminal, at most `max` JavaScript characters
/// (for text the screen shows that did not come through the report, such as
/// an error message from Pi).
#[wasm_bindgen(js_name = sanitizeLine)]
pub fn sanitize_line(text: &str, max: usize) -> String {
    context_guard_core::text::sanitize_line(text, max)
}
