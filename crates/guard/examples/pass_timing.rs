//! Native timing of a run-end pass over 1 MB of candidate output (its budget:
//! a pass's own work ≤ 15 ms for any shape of output).
//!
//! `cargo run --release -p context-guard-guard --example pass_timing`
//!
//! Prints the best of several runs of `plan` and `finish` (and of chunking
//! alone) for plain text and for `rg -n -C2` output over 5,000 files, and of
//! both through the boundary's forms (`plan_json`, `finish_json`: the output
//! out of line, chunks as ranges). This is a measurement to read, not a test:
//! the wasm build is slower than this native one, and the benchmark against
//! the TypeScript implementation lives with the extension
//! (`tests/bench/pass.bench.ts`).

// A timing program over fixed inputs, not the core: it may stop on a broken one.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::time::Instant;

use context_guard_base::entry::{Block, Content, ContextEntry, Message};
use context_guard_guard::classify::RequestOutcome;
use context_guard_guard::pass::{finish, finish_json, plan, plan_json, PassAnswers, PassInput};
use context_guard_guard::settings::Settings;
use context_guard_scan::chunk::chunk;
use serde_json::{json, Value};

const MB: usize = 1 << 20;

fn plain() -> String {
    let mut s = String::with_capacity(MB + 200);
    let mut i = 0;
    while s.len() < MB {
        if i % 17 == 0 {
            s.push('\n');
        }
        s.push_str(&format!("{i:06} INFO worker-{} handled request id={} in {} ms 日本 😀\n", i % 13, i * 7, i % 97));
        i += 1;
    }
    s
}

fn grep_c() -> String {
    let mut s = String::with_capacity(MB + 200);
    let mut f = 0;
    while s.len() < MB {
        let file = format!("packages/pkg-{}/src/2024-05-01-module-{f}.ts", f % 50);
        let n = 10 + f % 90;
        s.push_str(&format!("{file}-{}-  const before = load();\n", n - 1));
        s.push_str(&format!("{file}:{n}:  if (status === 503) retry();\n"));
        s.push_str(&format!("{file}-{}-  return after;\n--\n", n + 1));
        f += 1;
    }
    s
}

fn entry(id: &str, message: Message) -> ContextEntry {
    ContextEntry { id: id.into(), entry_type: "message".into(), messages: vec![message], raw: None }
}

fn input(text: &str) -> PassInput {
    let entries = vec![
        entry("u", Message::User { content: Content::Text("which clients retry on 503?".into()) }),
        entry(
            "a1",
            Message::Assistant {
                content: vec![Block::ToolCall {
                    id: "c1".into(),
                    name: "bash".into(),
                    arguments: json!({"command": "rg -n -C1 503"}),
                }],
                stop_reason: None,
            },
        ),
        entry(
            "r1",
            Message::ToolResult {
                tool_call_id: "c1".into(),
                tool_name: "bash".into(),
                content: vec![Block::Text { text: text.into() }],
                is_error: false,
            },
        ),
        entry(
            "a2",
            Message::Assistant { content: vec![Block::Text { text: "module-7 retries.".into() }], stop_reason: None },
        ),
    ];
    PassInput { entries, settings: Settings::default(), ..PassInput::default() }
}

/// The input as the extension sends it: text blocks of 256 characters or
/// more out of line (`extension/guard/wasm.ts`).
fn out_of_line(inp: &PassInput) -> (Vec<u8>, Vec<u8>, Vec<u32>) {
    let mut v = serde_json::to_value(inp).unwrap_or_default();
    let (mut texts, mut lengths) = (Vec::new(), Vec::new());
    for e in v["entries"].as_array_mut().into_iter().flatten() {
        for m in e["messages"].as_array_mut().into_iter().flatten() {
            for b in m["content"].as_array_mut().into_iter().flatten() {
                let Some(t) = b["text"].as_str().filter(|t| t.encode_utf16().count() >= 256) else { continue };
                texts.extend_from_slice(t.as_bytes());
                lengths.push(u32::try_from(t.len()).unwrap_or(0));
                *b = json!({"type": "text", "textAt": lengths.len() - 1});
            }
        }
    }
    (serde_json::to_vec(&v).unwrap_or_default(), texts, lengths)
}

/// Keeps every fifth chunk of each request.
fn answers(requests: &[Value]) -> PassAnswers {
    let outcomes = requests
        .iter()
        .map(|r| {
            let mut a = serde_json::Map::new();
            a.insert("keep_whole".into(), json!({"probability": 0.1}));
            let keys: Vec<String> =
                r["state"]["chunks"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
            for (i, k) in keys.iter().enumerate() {
                a.insert(k.clone(), json!({"probability": if i % 5 == 0 { 0.9 } else { 0.1 }}));
            }
            let first = keys.first().cloned().unwrap_or_else(|| "none".into());
            a.insert(
                "focus".into(),
                json!({"choice": first, "probabilities": {first.clone(): 0.7}, "confidence": 0.7}),
            );
            RequestOutcome::Answered { answers: Value::Object(a).into(), input_tokens: 8000.0, cost_usd: 0.0001 }
        })
        .collect();
    PassAnswers { outcomes, timed_out: false, ms: 900.0 }
}

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64() * 1000.0);
        last = Some(v);
    }
    (best, last.expect("at least one run"))
}

fn main() {
    // `PASS_TIMING_ONLY=grep` (or `plain`) runs one shape, for a profiler.
    let only = std::env::var("PASS_TIMING_ONLY").unwrap_or_default();
    for (name, text) in [("plain text", plain()), ("grep -C, 5,000+ files", grep_c())] {
        if !only.is_empty() && !name.starts_with(&only) {
            continue;
        }
        let inp = input(&text);
        let (chunk_ms, chunked) = best(20, || chunk(&text));
        let (plan_ms, p) = best(20, || plan(&inp));
        let requests: Vec<Value> = p.requests.iter().map(|r| serde_json::to_value(r).unwrap_or(Value::Null)).collect();
        let ans = answers(&requests);
        let (finish_ms, out) = best(20, || finish(&p.pass, &ans));
        let saved = out.saved_chars;
        // The same through the boundary's forms, as the wasm exports run them:
        // the output's text out of line, the requests' chunks as ranges.
        let (input_json, texts, lengths) = out_of_line(&inp);
        let (plan_json_ms, planned) = best(10, || plan_json(&input_json, &texts, &lengths));
        let Ok(planned) = planned else { return };
        let answers_text = serde_json::to_vec(&ans).unwrap_or_default();
        let (finish_json_ms, _) = best(10, || finish_json(&planned.state, &answers_text).unwrap_or_default());
        println!(
            "{name:>22}: {:.2} MB, {} lines, grep={}, {} chunks, {} requests | chunk {chunk_ms:.2} ms, plan {plan_ms:.2} ms, \
             finish {finish_ms:.2} ms, plan+finish {:.2} ms, with JSON text {:.2} ms | saved {saved} chars",
            text.len() as f64 / MB as f64,
            text.lines().count(),
            chunked.grep,
            chunked.chunks.len(),
            p.requests.len(),
            plan_ms + finish_ms,
            plan_json_ms + finish_json_ms,
        );
    }
}
