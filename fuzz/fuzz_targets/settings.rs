//! Settings from arbitrary text, and `/guard on|off` rewriting it.
#![no_main]

use context_guard_guard::settings::{parse, set_enabled};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (s, _) = parse(&text);
    assert!((0.0..=1.0).contains(&s.keep_whole_threshold));
    if let Ok(out) = set_enabled(&text, true) {
        assert!(parse(&out).0.enabled);
    }
});
