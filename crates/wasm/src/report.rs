//! The `/context` report across the boundary: one call per open or refresh.

use crate::{from_js, to_js};
use context_guard_core::report;
use wasm_bindgen::prelude::*;

/// Builds the whole report (rows, drift, history, largest, gauges, text) from
/// one read of Pi (`ContextInputs`).
#[wasm_bindgen(js_name = buildReport)]
pub fn build_report(inputs: JsValue) -> Result<JsValue, JsError> {
    let inputs: report::ContextInputs = from_js(inputs, "context inputs")?;
    to_js(&report::build(&inputs))
}

/// One line safe to paint on a terminal, at most `max` JavaScript characters
/// (for text the screen shows that did not come through the report, such as
/// an error message from Pi).
#[wasm_bindgen(js_name = sanitizeLine)]
pub fn sanitize_line(text: &str, max: usize) -> String {
    context_guard_core::text::sanitize_line(text, max)
}
