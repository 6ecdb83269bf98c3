//! The guard's figures across the boundary at every redraw of the status bar
//! (and for `/guard` and `/context`): columns in, one short JSON text out.

use context_guard_guard_read::stats;
use wasm_bindgen::prelude::*;

// Declared here rather than taken as `js_sys::Function`, as `report.rs` does
// for `describe`: js-sys would add kilobytes to the `.wasm` for one call.
#[wasm_bindgen]
extern "C" {
    /// The host's `imageHead(index, chars)`: the first `chars` characters of
    /// the `index`-th image's base64 data.
    #[wasm_bindgen(typescript_type = "(index: number, chars: number) => string")]
    pub type ImageHead;

    /// `imageHead.call(undefined, index, chars)`; a throw becomes `Err`.
    #[wasm_bindgen(method, js_name = call, catch)]
    fn call(this: &ImageHead, this_arg: &JsValue, index: u32, chars: u32) -> Result<JsValue, JsValue>;
}

/// `{ stats, status }`: the savings, lifetime total and usage on the branch,
/// and the status-bar text, from the columns of `stats::columns`:
///
/// - `shape`: the edited messages' roles, forms, blocks and text lengths, from a `Uint32Array`;
/// - `heads`: the heads of their texts (and tool calls' names and arguments),
///   joined, as UTF-16 code units in little-endian bytes (Node's
///   `buffer.write(heads, "utf16le")`, one native copy);
/// - `marks`: the branch's records and compactions, six numbers each, from a `Float64Array`;
/// - `money`: the bill's two words for the status bar (`saved $0.27`), or empty;
/// - `image_head(index, chars)`: a prefix of an image's base64 data, asked
///   only for images in edited entries and only as far as its dimensions
///   need. A throw or a non-string reads as no data (an unreadable image).
///
/// wasm-bindgen copies the three arrays into the module's memory in one step each.
#[wasm_bindgen(js_name = guardSavings)]
pub fn guard_savings(shape: &[u32], heads: &[u8], marks: &[f64], money: &str, image_head: &ImageHead) -> String {
    stats::columns_json(shape, heads, marks, money, |index, chars| {
        let (Ok(index), Ok(chars)) = (u32::try_from(index), u32::try_from(chars)) else { return String::new() };
        image_head.call(&JsValue::UNDEFINED, index, chars).ok().and_then(|text| text.as_string()).unwrap_or_default()
    })
}
