//! Chunking and segments over arbitrary text: the chunks always cover the
//! output exactly and segments respect their limits.
#![no_main]

use context_guard_scan::chunk::{chunk, chunk_text, segments};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let c = chunk(&text);
    let mut at = 0;
    for k in &c.chunks {
        assert_eq!(k.start, at);
        assert!(chunk_text(&text, k).is_some());
        at = k.end;
    }
    assert_eq!(at, text.len());
    let max = 1000 + data.first().copied().unwrap_or(0) as usize * 100;
    for s in segments(&c.chunks, max, 1 + data.last().copied().unwrap_or(0) as usize % 40) {
        assert!(s.oversize || s.chars <= max);
    }
});
