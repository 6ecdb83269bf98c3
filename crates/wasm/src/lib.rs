//! The WebAssembly boundary. Each export takes its input as JSON text (or a
//! plain string or number; the report's per-message columns and the status
//! bar's savings come as typed arrays), calls one core function and returns
//! JSON text.
//! Text crosses once, where `serde-wasm-bindgen` would convert thousands of
//! objects field by field, and it keeps that converter's code out of the
//! binary. No decision is made here; errors become JavaScript exceptions that
//! the extension catches at its edge.
//!
//! The core is the crates beside this one (`context-guard-base`, `-report`,
//! `-scan`, `-economics`, `-guard`, `-guard-read`); each export names the one
//! it calls.

use wasm_bindgen::prelude::*;

mod guard;
mod pin;
mod report;
mod segment_fit;
mod stats;

/// The core's version.
#[wasm_bindgen]
pub fn version() -> String {
    context_guard_base::VERSION.to_string()
}
