//! The Anthropic cache pin across the boundary: one [`CacheLog`] per session,
//! held here between requests (its entries' prefixes are hashes the
//! extension never needs to see). The request body crosses as its JSON text,
//! the plan comes back as JSON text (`guard/pin.rs`'s `Plan`).

use context_guard_economics::pin;
use wasm_bindgen::prelude::*;

/// `guard::pin::Log`, for one session.
#[wasm_bindgen]
pub struct CacheLog {
    log: pin::Log,
}

impl Default for CacheLog {
    fn default() -> Self {
        Self::new()
    }
}

#[wasm_bindgen]
impl CacheLog {
    #[wasm_bindgen(constructor)]
    pub fn new() -> CacheLog {
        CacheLog { log: pin::Log::default() }
    }

    /// The `Plan` (JSON text) for one Messages request body (JSON text) to
    /// `model` (`provider/id`) at `now_ms`; throws when the body is not JSON.
    pub fn plan(&mut self, body: &str, model: &str, now_ms: f64) -> Result<String, JsError> {
        self.log.plan_json(body, model, now_ms).map_err(|e| JsError::new(&e))
    }

    /// The usage of the response to the last planned request (tokens).
    pub fn observe(&mut self, model: &str, cache_read: f64, cache_write: f64) {
        self.log.observe(model, tokens(cache_read), tokens(cache_write));
    }

    /// The read points (tool_use ids) for the break-even rules, as JSON text.
    #[wasm_bindgen(js_name = readPoints)]
    pub fn read_points(&self, model: &str, now_ms: f64) -> String {
        self.log.read_points_json(model, now_ms)
    }
}

/// A usage figure from JavaScript as a count: negative, NaN or fractional
/// values (a provider's oddity) never reach the core as anything but a count.
fn tokens(n: f64) -> usize {
    if n.is_finite() && n > 0.0 {
        n.min(usize::MAX as f64) as usize
    } else {
        0
    }
}
