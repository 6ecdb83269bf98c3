//! The `/context` report across the boundary: one call per open or refresh.

use context_guard_report::{self as report, MessageText};
use wasm_bindgen::prelude::*;

// Declared here rather than taken as `js_sys::Function`: linking js-sys for
// this one call added about 6 KB to a `.wasm` that has a 512 KB budget.
#[wasm_bindgen]
extern "C" {
    /// The host's `describe(index)`: the JSON text of one message's `MessageText`.
    #[wasm_bindgen(typescript_type = "(index: number) => string")]
    pub type Describe;

    /// `describe.call(undefined, index)`; a throw becomes `Err`.
    #[wasm_bindgen(method, js_name = call, catch)]
    fn call(this: &Describe, this_arg: &JsValue, index: u32) -> Result<JsValue, JsValue>;
}

/// Builds the whole report (rows, drift, history, largest, gauges, text) from
/// one read of Pi (see `report::build_json`):
///
/// - `inputs`: `ContextInputs` as JSON text, without the per-message columns;
/// - `tokens`, `kind`: Pi's count and the kind of each message, from a
///   `Float64Array` and a `Uint32Array` (wasm-bindgen copies the memory);
/// - `series`, `marks`: each request's context tokens and marks over the
///   branch, from a `Float64Array` and a `Uint32Array`;
/// - `describe(index)`: the JSON text of message `index`'s `MessageText`,
///   called only for the messages the report lists. A throw, a non-string or
///   bad JSON gives that message no descriptor, not a failed report.
///
/// Returns `ContextReport` as JSON text.
#[wasm_bindgen(js_name = buildReport)]
pub fn build_report(
    inputs: &str,
    tokens: Vec<f64>,
    kind: Vec<u32>,
    series: Vec<f64>,
    marks: Vec<u32>,
    describe: &Describe,
) -> Result<String, JsError> {
    let mut texts = |index: usize| -> MessageText {
        describe
            .call(&JsValue::UNDEFINED, u32::try_from(index).unwrap_or(u32::MAX))
            .ok()
            .and_then(|text| text.as_string())
            .and_then(|text| report::input::message_text(&text))
            .unwrap_or_default()
    };
    report::build_json(inputs, (tokens, kind), (series, marks), &mut texts).map_err(|e| JsError::new(&e))
}

/// One line safe to paint on a terminal, at most `max` JavaScript characters
/// (for text the screen shows that did not come through the report, such as
/// an error message from Pi).
#[wasm_bindgen(js_name = sanitizeLine)]
pub fn sanitize_line(text: &str, max: usize) -> String {
    context_guard_base::text::sanitize_line(text, max)
}
