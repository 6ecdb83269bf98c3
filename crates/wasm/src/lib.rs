//! The WebAssembly boundary. Each export converts its input with
//! `serde-wasm-bindgen`, calls one core function and converts the result back.
//! No decision is made here; errors become JavaScript exceptions that the
//! extension catches at its edge.

use context_guard_core as core;
use serde::Serialize;
use wasm_bindgen::prelude::*;

mod report;

// Shared by the exports that take or return structured values (the guard's).
#[allow(dead_code)]
fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    // Plain objects, not Maps: the extension reads fields by name.
    let serializer = serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true);
    value.serialize(&serializer).map_err(|e| JsError::new(&format!("core output: {e}")))
}

#[allow(dead_code)]
fn from_js<T: serde::de::DeserializeOwned>(value: JsValue, what: &str) -> Result<T, JsError> {
    serde_wasm_bindgen::from_value(value).map_err(|e| JsError::new(&format!("{what}: {e}")))
}

/// The core's version.
#[wasm_bindgen]
pub fn version() -> String {
    core::VERSION.to_string()
}
