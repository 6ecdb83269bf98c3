//! The Anthropic cache pin over request bodies built from the input: a few
//! requests in a row (growing, edited, to two models), each planned and then
//! observed with arbitrary usage. Every mark names a block that exists and
//! had no breakpoint, and a body Pi built within Anthropic's 4 breakpoints
//! stays within them.
#![no_main]

use context_guard_economics::pin::{Log, MAX_BREAKPOINTS};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        let (first, rest) = self.0.split_first().map_or((0, &[][..]), |(f, r)| (*f, r));
        self.0 = rest;
        first
    }
}

fn block(b: &mut Bytes, i: usize) -> Value {
    let cc = if b.next() % 5 == 0 { json!({"type": "ephemeral", "ttl": if b.next() % 2 == 0 { "1h" } else { "5m" }}) } else { Value::Null };
    let text = "é😀x".repeat(b.next() as usize % 7);
    let mut v = match b.next() % 4 {
        0 => json!({"type": "text", "text": text}),
        1 => json!({"type": "tool_result", "tool_use_id": format!("t{}", b.next() % 6), "content": text}),
        2 => json!({"type": "tool_use", "id": format!("t{i}"), "name": "bash", "input": {"n": b.next() as f64 / 3.0}}),
        _ => json!({"type": "image", "source": {"data": text}}),
    };
    if !cc.is_null() {
        v["cache_control"] = cc;
    }
    v
}

fn body(b: &mut Bytes) -> Value {
    let messages: Vec<Value> = (0..b.next() % 12)
        .map(|i| {
            let role = ["user", "assistant", "system"][b.next() as usize % 3];
            let content = if b.next() % 4 == 0 {
                Value::String("q".repeat(b.next() as usize % 5))
            } else {
                Value::Array((0..b.next() % 4).map(|k| block(b, usize::from(i) * 4 + usize::from(k))).collect())
            };
            json!({"role": role, "content": content})
        })
        .collect();
    let system: Vec<Value> = (0..b.next() % 3).map(|i| block(b, 100 + i as usize)).collect();
    json!({"model": "m", "system": system, "tools": [{"name": "bash"}], "messages": messages})
}

fn breakpoints(v: &Value) -> usize {
    match v {
        Value::Object(o) => o.get("cache_control").map_or(0, |c| usize::from(!c.is_null())) + o.values().map(breakpoints).sum::<usize>(),
        Value::Array(a) => a.iter().map(breakpoints).sum(),
        _ => 0,
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let mut log = Log::default();
    for step in 0..(1 + b.next() % 5) {
        let v = body(&mut b);
        let model = ["a/x", "a/y"][b.next() as usize % 2];
        let plan = log.plan(&v, model, f64::from(step) * 60_000.0 * f64::from(b.next() % 8));
        let before = breakpoints(&v);
        let mut after = before;
        for m in &plan.marks {
            let content = &v["messages"][m.message]["content"];
            let target = if content.is_string() { Some(content) } else { content.get(m.block) };
            let target = target.expect("a mark names a block that exists");
            assert!(target.get("cache_control").is_none_or(Value::is_null), "a mark never lands on a breakpoint");
            after += 1;
        }
        if plan.drop_system {
            after -= 1;
        }
        if before <= MAX_BREAKPOINTS {
            assert!(after <= MAX_BREAKPOINTS, "{before} → {after}");
        }
        log.observe(model, usize::from(b.next()) * 97, usize::from(b.next()) * 89);
        let _ = log.read_points(model, f64::from(b.next()));
    }
    // Not JSON shaped like a body at all.
    if let Ok(v) = serde_json::from_slice::<Value>(data) {
        let _ = log.plan(&v, "a/x", 0.0);
    }
});
