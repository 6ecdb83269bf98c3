//! recall with an arbitrary pattern, offset and limit over an arbitrary text.
#![no_main]

use context_guard_base::entry::Message;
use context_guard_guard_read::recall::{recall, RecallRequest};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (pattern, body) = text.split_once('\u{0}').unwrap_or((&text, "a\nb\n"));
    let n = |i: usize| data.get(i).map(|&b| f64::from(b) - 10.0);
    let r = recall(&RecallRequest {
        entry_id: "e".into(),
        pattern: (!pattern.is_empty()).then(|| pattern.to_string()),
        offset: n(0),
        limit: n(1),
        message: Some(Message::from_value(json!({"role": "toolResult", "content": [{"type": "text", "text": body}]}))),
        exchange: None,
    });
    if !r.is_error {
        assert!(r.text.lines().count() <= 2003);
    }
});
