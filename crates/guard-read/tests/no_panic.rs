//! The guard core never panics, whatever it is given: a panic must never
//! reach Pi, so every entry point is fuzzed and tested on any input.
//!
//! A deterministic randomized test that runs with `cargo test` on stable:
//! thousands of generated inputs built from the pieces that stress each step
//! (grep prefixes, `-digits-`, separators, blank lines, CRLF, emoji and CJK at
//! every offset, long lines, odd JSON), checking the invariants that must
//! hold, not just the absence of a panic. `fuzz/` runs the same entry points
//! under libFuzzer where a nightly toolchain is available.

use context_guard_base::entry::{ContextEntry, Message};
use context_guard_base::size::{image_chars, image_dimensions, image_head};
use context_guard_base::text::{clip_middle, js_len, js_prefix, js_suffix, line_count, sanitize_line, short_count};
use context_guard_economics::worth::Prices;
use context_guard_guard::classify::RequestOutcome;
use context_guard_guard::decide::interpret;
use context_guard_guard::exchange::STUB_PREFIX;
use context_guard_guard::pass::{finish, finish_json, plan, plan_json, PassAnswers, PassInput};
use context_guard_guard::render::tool_label;
use context_guard_guard::render::MARK;
use context_guard_guard::settings::{parse, set_enabled, Settings};
use context_guard_guard_read::recall::{recall, RecallRequest};
use context_guard_guard_read::stats::columns_json;
use context_guard_scan::chunk::{chunk, chunk_text, segments};
use serde_json::{json, Value};

/// xorshift64*: deterministic, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % (n.max(1) as u64)) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const PIECES: &[&str] = &[
    "src/a.ts:12:",
    "src/a.ts-13-",
    "2024-05-01-post.md:3:",
    "2024-05-01-post.md-4-",
    "x-1-y-2-z-3-",
    "--\n",
    "\n",
    "\n\n",
    "\r\n",
    " ",
    "\t",
    ":",
    "-",
    "12",
    "::",
    ":1:",
    "-1-",
    "😀",
    "日本語",
    "é",
    "\u{0}",
    "\u{1b}[31m",
    "\"",
    "\\",
    "[context-guard]",
    "a",
    "status = 503",
    "{",
    "}",
    "\u{feff}",
    "\u{202e}",
    "𝄞",
];

fn text(rng: &mut Rng, max_pieces: usize) -> String {
    let mut s = String::new();
    let n = rng.below(max_pieces);
    for _ in 0..n {
        if rng.chance(2) {
            let long = rng.pick(&["x", "😀", "日", "a:1:"]).repeat(rng.below(6000));
            s.push_str(&long);
        } else {
            s.push_str(rng.pick(PIECES));
        }
    }
    s
}

fn value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 2 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => json!(rng.chance(50)),
        2 => json!(rng.below(3) as f64 - 0.5 + (rng.below(1000) as f64) / 1000.0),
        3 => json!(rng.below(1_000_000)),
        4 => json!(text(rng, 5)),
        5 => json!(-(rng.below(10) as i64)),
        6 => Value::Array((0..rng.below(4)).map(|_| value(rng, depth + 1)).collect()),
        _ => {
            let mut m = serde_json::Map::new();
            for _ in 0..rng.below(5) {
                let k = rng.pick(&[
                    "probability",
                    "choice",
                    "probabilities",
                    "confidence",
                    "type",
                    "text",
                    "role",
                    "content",
                    "x",
                ]);
                m.insert(k.to_string(), value(rng, depth + 1));
            }
            Value::Object(m)
        }
    }
}

#[test]
fn text_helpers_never_panic_and_never_split_characters() {
    let mut rng = Rng(0x5eed_0001);
    for _ in 0..3000 {
        let s = text(&mut rng, 20);
        let n = rng.below(js_len(&s) + 3);
        assert!(js_len(js_prefix(&s, n)) <= n);
        assert!(js_len(js_suffix(&s, n)) <= n);
        assert!(js_len(&clip_middle(&s, n)) <= n.max(js_len(&s).min(n)));
        assert!(js_len(&sanitize_line(&s, n)) <= n.max(1));
        let _ = line_count(&s);
        let _ = short_count(rng.next() as usize);
    }
}

#[test]
fn chunks_always_cover_the_output() {
    let mut rng = Rng(0x5eed_0002);
    for _ in 0..3000 {
        let s = text(&mut rng, 400);
        let c = chunk(&s);
        let mut at = 0;
        let mut lines = 0;
        for k in &c.chunks {
            assert_eq!(k.start, at);
            assert!(chunk_text(&s, k).is_some());
            at = k.end;
            lines += k.lines;
        }
        assert_eq!(at, s.len());
        assert_eq!(lines, line_count(&s));
        let max = 800 + rng.below(40_000);
        let segs = segments(&c.chunks, max, 1 + rng.below(50));
        assert_eq!(segs.iter().map(|g| g.count).sum::<usize>(), c.chunks.len());
        for g in segs {
            assert!(g.oversize || g.chars <= max);
        }
    }
}

fn entries(rng: &mut Rng, output: &str) -> Vec<ContextEntry> {
    let msg = |v: Value| Message::from_value(v);
    let entry = |id: &str, m: Message| ContextEntry {
        id: id.into(),
        entry_type: "message".into(),
        messages: vec![m],
        raw: None,
    };
    let tool = rng.pick(&["bash", "read", "grep", "edit", "mcp"]).to_string();
    let mut out = vec![entry("u", msg(json!({"role": "user", "content": text(rng, 5)})))];
    if rng.chance(30) {
        out.push(entry(
            "s",
            msg(json!({"role": "user", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]})),
        ));
    }
    out.push(entry(
        "a",
        msg(json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": tool, "arguments": value(rng, 0)}]})),
    ));
    let result = msg(json!({"role": "toolResult", "toolCallId": "c", "toolName": tool, "isError": rng.chance(20),
                           "content": [{"type": "text", "text": output}]}));
    let mut r = entry("r", result);
    if rng.chance(10) {
        r.raw = Some(msg(value(rng, 0)));
    }
    out.push(r);
    out.push(entry("z", msg(json!({"role": "assistant", "content": [{"type": "text", "text": text(rng, 10)}]}))));
    if rng.chance(10) {
        out.push(ContextEntry::from_value(value(rng, 0)));
    }
    out
}

fn outcome(rng: &mut Rng, chunks: usize) -> RequestOutcome {
    match rng.below(10) {
        0 => RequestOutcome::Timeout,
        1 => RequestOutcome::Error { message: "x".into() },
        2 => RequestOutcome::from_value(value(rng, 0)),
        _ => {
            let mut m = serde_json::Map::new();
            let p = |rng: &mut Rng| if rng.chance(5) { value(rng, 2) } else { json!((rng.below(101) as f64) / 100.0) };
            m.insert("keep_whole".into(), json!({"probability": p(rng)}));
            let choice = match rng.below(4) {
                0 => "whole".to_string(),
                1 => "none".to_string(),
                2 => format!("chunk_{}", rng.below(chunks + 3)),
                _ => text(rng, 2),
            };
            m.insert(
                "focus".into(),
                json!({"choice": choice, "probabilities": {choice.clone(): p(rng)}, "confidence": p(rng)}),
            );
            for i in 1..=chunks + 2 {
                if !rng.chance(3) {
                    m.insert(format!("chunk_{i}"), json!({"probability": p(rng)}));
                }
            }
            RequestOutcome::Answered {
                answers: Value::Object(m).into(),
                input_tokens: rng.below(9999) as f64,
                cost_usd: f64::NAN,
            }
        }
    }
}

#[test]
fn plan_and_finish_never_panic_and_edits_are_well_formed() {
    let mut rng = Rng(0x5eed_0003);
    for round in 0..600 {
        let output = text(&mut rng, if round % 10 == 0 { 3000 } else { 500 });
        let settings = Settings {
            min_result_chars: 1 + rng.below(3000),
            min_run_chars: rng.below(5000),
            max_segment_chars: 1000 + rng.below(20_000),
            max_chunks_per_segment: 1 + rng.below(40),
            keep_cited_files: rng.chance(50),
            history_exchanges: rng.below(4),
            ..Settings::default()
        };
        let input = PassInput {
            entries: entries(&mut rng, &output),
            settings,
            classifier: rng.below(4) != 0,
            ..PassInput::default()
        };
        let p = plan(&input);
        let keep = if rng.chance(10) { rng.below(3) } else { usize::MAX };
        let mut outcomes: Vec<RequestOutcome> = Vec::new();
        for r in p.requests.iter().take(keep) {
            let n = serde_json::to_value(r).ok().and_then(|v| v["state"]["chunks"].as_object().map(|m| m.len()));
            outcomes.push(outcome(&mut rng, n.unwrap_or(0)));
        }
        let answers = PassAnswers { outcomes, timed_out: rng.chance(10), ms: 5.0 };
        let out = finish(&p.pass, &answers);
        for e in serde_json::to_value(&out.entries).unwrap().as_array().unwrap() {
            if e["type"] == "context_edit" {
                let t = e["replacement"]["content"][0]["text"].as_str().unwrap();
                assert!(t.starts_with("[context-guard] "));
                assert!(js_len(t) < js_len(&output));
            }
        }
        // The JSON forms, and input bytes, out-of-line texts and lengths cut or flipped.
        let bytes = serde_json::to_vec(&input).unwrap();
        let planned = plan_json(&bytes, &[], &[]).unwrap();
        let ans = serde_json::to_vec(&answers).unwrap_or_default();
        let _ = finish_json(&planned.state, &ans);
        let mut bad = bytes.clone();
        for _ in 0..1 + rng.below(4) {
            if !bad.is_empty() {
                let i = rng.below(bad.len());
                bad[i] = rng.next() as u8;
            }
        }
        bad.truncate(rng.below(bad.len() + 1));
        let lengths: Vec<u32> = (0..rng.below(4)).map(|_| rng.below(bad.len() + 2) as u32).collect();
        if let Ok(p) = plan_json(&bad, &bad, &lengths) {
            let _ = finish_json(&p.state, &bad);
        }
        let _ = finish_json(&planned.state, &bad);
    }
}

#[test]
fn interpretation_never_panics_on_arbitrary_answers() {
    let mut rng = Rng(0x5eed_0004);
    let s = Settings::default();
    for _ in 0..5000 {
        let count = rng.below(50);
        let first = rng.below(200);
        let v = interpret(&outcome(&mut rng, count + first), first.max(1), count, &s);
        assert_eq!(v.keep.len(), count);
    }
}

#[test]
fn recall_never_panics_and_stays_within_the_caps() {
    let mut rng = Rng(0x5eed_0005);
    let fragments = [
        "a",
        ".",
        "*",
        "+",
        "?",
        "(",
        ")",
        "[",
        "]",
        "^",
        "$",
        "\\",
        "|",
        "{2}",
        "{1,3}",
        "(?i)",
        "(?=",
        "(?<=",
        "\\1",
        "\\d",
        "\\w",
        "😀",
        "日",
        "[^]",
        "(?<n>",
        "\\k<n>",
        "{99999}",
        "x{0,1000}",
    ];
    for round in 0..1500 {
        let body = text(&mut rng, if round % 50 == 0 { 2000 } else { 200 });
        let pattern: String = (0..rng.below(8)).map(|_| rng.pick(&fragments)).collect();
        let num = |rng: &mut Rng| match rng.below(6) {
            0 => None,
            1 => Some(f64::NAN),
            2 => Some(-1.0),
            3 => Some(rng.below(5) as f64 + 0.5),
            _ => Some(rng.below(3000) as f64),
        };
        let req = RecallRequest {
            entry_id: text(&mut rng, 3),
            pattern: rng.chance(60).then_some(pattern),
            offset: num(&mut rng),
            limit: num(&mut rng),
            message: match rng.below(10) {
                0 => None,
                1 => Some(Message::from_value(value(&mut rng, 0))),
                _ => Some(Message::from_value(
                    json!({"role": "toolResult", "content": [{"type": "text", "text": body}]}),
                )),
            },
            exchange: None,
        };
        let mut req = req;
        if rng.chance(5) {
            // The prompt of an omitted exchange, with arbitrary entries after it.
            req.message = Some(Message::from_value(json!({"role": "user", "content": text(&mut rng, 20)})));
            let entries = (0..rng.below(6))
                .map(|i| (format!("e{i}"), Message::from_value(if rng.chance(2) { value(&mut rng, 0) } else {
                    json!({"role": "toolResult", "toolName": "bash", "content": [{"type": "text", "text": body}]})
                })))
                .collect();
            let omitted = rng.chance(2).then(|| vec!["e1".to_string(), text(&mut rng, 2)]);
            req.exchange = Some(context_guard_guard_read::recall::ExchangeSource { omitted, entries });
        }
        let r = recall(&req);
        if !r.is_error {
            assert!(r.text.lines().count() <= 2000 + 3, "{} lines", r.text.lines().count());
            assert!(js_len(&r.text) <= 50 * 1024 + 400, "{} chars", js_len(&r.text));
        }
        let _ = RecallRequest::from_value(value(&mut rng, 0));
    }
}

#[test]
fn settings_and_labels_never_panic() {
    let mut rng = Rng(0x5eed_0006);
    let keys = ["enabled", "model", "minResultChars", "chunkKeepThreshold", "excludeTools", "historyExchanges", "zz"];
    for _ in 0..3000 {
        let mut m = serde_json::Map::new();
        for _ in 0..rng.below(6) {
            m.insert(rng.pick(&keys).to_string(), value(&mut rng, 0));
        }
        let doc = Value::Object(m).to_string();
        let cut = rng.below(doc.len() + 1);
        let doc = if rng.chance(20) { doc.get(..cut).unwrap_or("").to_string() } else { doc };
        let (s, _) = parse(&doc);
        assert!((0.0..=1.0).contains(&s.chunk_keep_threshold));
        assert!(s.history_exchanges <= 10);
        let want = rng.chance(50);
        if let Ok(t) = set_enabled(&doc, want) {
            assert_eq!(parse(&t).0.enabled, want, "{t}");
        }
        let label = tool_label(&text(&mut rng, 3), &value(&mut rng, 0));
        assert!(!label.contains('\n'));
        let _ = image_chars(&text(&mut rng, 30));
    }
}

/// Sessions of many exchanges (tool calls, steering, custom messages,
/// images, omissions and edits by others) with arbitrary whole-item answers:
/// the pass never panics, and an omission never leaves a tool call without
/// its result or a result without its call.
#[test]
fn whole_items_never_panic_and_omissions_keep_calls_with_results() {
    let mut rng = Rng(0x5eed_0006);
    let png = "iVBORw0KGgoAAAANSUhEUgAABQAAAAPACAYAAAA";
    let msg = |v: Value| Message::from_value(v);
    let entry = |id: &str, m: Message| ContextEntry {
        id: id.into(),
        entry_type: "message".into(),
        messages: vec![m],
        raw: None,
    };
    for _ in 0..300 {
        let mut entries: Vec<ContextEntry> = Vec::new();
        let mut n = 0;
        let mut id = |p: &str| {
            n += 1;
            format!("{p}{n}")
        };
        for _ in 0..1 + rng.below(7) {
            entries.push(entry(&id("u"), msg(json!({"role": "user", "content": text(&mut rng, 40)}))));
            for _ in 0..rng.below(4) {
                let call = id("c");
                let tool = ["bash", "read", "grep", "edit"][rng.below(4)];
                entries.push(entry(
                    &id("a"),
                    msg(json!({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": tool, "arguments": {"command": text(&mut rng, 3), "path": "a.rs"}}]})),
                ));
                let len = 1 + rng.below(1500);
                let mut content = vec![json!({"type": "text", "text": text(&mut rng, len)})];
                if rng.chance(5) {
                    content.push(json!({"type": "image", "data": if rng.chance(2) { png.to_string() } else { text(&mut rng, 5) }, "mimeType": "image/png"}));
                }
                let mut r = entry(
                    &id("r"),
                    msg(
                        json!({"role": "toolResult", "toolCallId": call, "toolName": tool, "isError": rng.chance(10), "content": content}),
                    ),
                );
                if rng.chance(15) {
                    r.raw = Some(r.messages[0].clone());
                    if rng.chance(2) {
                        r.messages.clear();
                    }
                }
                entries.push(r);
                if rng.chance(10) {
                    entries.push(entry(&id("s"), msg(json!({"role": "user", "content": text(&mut rng, 5)}))));
                }
                if rng.chance(10) {
                    let mut c = entry(
                        &id("m"),
                        msg(json!({"role": "custom", "customType": "note", "content": text(&mut rng, 20)})),
                    );
                    c.entry_type = "custom_message".into();
                    entries.push(c);
                }
            }
            entries.push(entry(
                &id("z"),
                msg(json!({"role": "assistant", "content": [{"type": "text", "text": text(&mut rng, 30)}]})),
            ));
        }
        let settings = Settings {
            small_result_min_chars: rng.below(600),
            min_result_chars: 200 + rng.below(2000),
            keep_recent_exchanges: rng.below(3),
            exchange_break_even: rng.chance(2),
            image_keep_turns: rng.below(4),
            max_segment_chars: 500 + rng.below(5000),
            max_chunks_per_segment: 1 + rng.below(40),
            ..Settings::default()
        };
        let input =
            PassInput { entries: entries.clone(), settings, classifier: !rng.chance(5), ..PassInput::default() };
        let p = plan(&input);
        let outcomes = p
            .requests
            .iter()
            .map(|r| {
                let v = serde_json::to_value(r).unwrap();
                let mut m = serde_json::Map::new();
                for k in v["questions"].as_object().map(|q| q.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
                    if !rng.chance(8) {
                        m.insert(k, json!({"probability": (rng.below(101) as f64) / 100.0}));
                    }
                }
                if rng.chance(10) {
                    outcome(&mut rng, 3)
                } else {
                    RequestOutcome::Answered { answers: Value::Object(m).into(), input_tokens: 1.0, cost_usd: 0.0 }
                }
            })
            .collect();
        let out = finish(&p.pass, &PassAnswers { outcomes, timed_out: rng.chance(10), ms: 1.0 });
        let v = serde_json::to_value(&out.entries).unwrap();
        let nulls: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "context_edit" && e["replacement"].is_null())
            .filter_map(|e| e["targetId"].as_str())
            .collect();
        // Every call id of an omitted assistant entry has its result omitted too, and back.
        let calls_of = |e: &ContextEntry| -> Vec<String> {
            let v = serde_json::to_value(&e.messages).unwrap();
            let mut ids = Vec::new();
            for m in v.as_array().unwrap() {
                if let Some(id) = m["toolCallId"].as_str() {
                    ids.push(id.to_string());
                }
                for b in m["content"].as_array().into_iter().flatten() {
                    if let Some(id) = b["id"].as_str() {
                        ids.push(id.to_string());
                    }
                }
            }
            ids
        };
        let omitted: Vec<String> =
            entries.iter().filter(|e| nulls.contains(&e.id.as_str())).flat_map(calls_of).collect();
        let kept: Vec<String> = entries.iter().filter(|e| !nulls.contains(&e.id.as_str())).flat_map(calls_of).collect();
        for id in &omitted {
            assert!(!kept.contains(id), "call {id} split by an omission");
        }
        let bytes = serde_json::to_vec(&input).unwrap();
        let planned = plan_json(&bytes, &[], &[]).unwrap();
        let _ = finish_json(&planned.state, b"{}");
    }
}

/// One message in the savings' columns (`stats::columns`): usually well
/// formed, with marker and stub heads among the texts; sometimes any number.
fn column_message(rng: &mut Rng, shape: &mut Vec<u32>, heads: &mut Vec<u8>) {
    let utf16 = |heads: &mut Vec<u8>, t: &str| heads.extend(t.encode_utf16().flat_map(u16::to_le_bytes));
    shape.push(rng.below(6) as u32);
    shape.push(rng.below(4) as u32);
    let count = rng.below(4);
    shape.push(count as u32);
    for _ in 0..count {
        match rng.below(5) {
            0 | 1 => {
                let t = match rng.below(4) {
                    0 => format!("{}{}", STUB_PREFIX, text(rng, 4)),
                    1 => format!("{}{}", MARK, text(rng, 4)),
                    _ => text(rng, 6),
                };
                let head = js_prefix(&t, 64);
                let length = if rng.chance(10) { rng.next() as u32 } else { (js_len(&t) + rng.below(100_000)) as u32 };
                shape.extend([1, length, js_len(head) as u32]);
                utf16(heads, head);
            }
            2 => shape.push(2),
            3 => {
                let name = text(rng, 2);
                let args = if rng.chance(50) { value(rng, 0).to_string() } else { text(rng, 3) };
                shape.extend([3, js_len(&name) as u32, js_len(&args) as u32]);
                utf16(heads, &name);
                utf16(heads, &args);
            }
            _ => shape.push(rng.next() as u32 % 6),
        }
    }
}

#[test]
fn savings_columns_never_panic_and_count_at_most_what_they_hold() {
    let mut rng = Rng(0x5eed_0009);
    let png = "iVBORw0KGgoAAAANSUhEUgAABQAAAAPACAIAAAB/fS41AAAAA";
    for _ in 0..2000 {
        let mut shape = Vec::new();
        let mut heads = Vec::new();
        let mut entries = 0;
        for _ in 0..rng.below(12) {
            entries += 1;
            let visible = rng.below(3);
            shape.push(visible as u32);
            for _ in 0..=visible {
                column_message(&mut rng, &mut shape, &mut heads);
            }
        }
        if rng.chance(10) {
            shape.push(rng.next() as u32);
            heads.pop();
        }
        let marks: Vec<f64> = (0..rng.below(30))
            .map(|_| [0.0, 1.0, 2.0, -1.0, f64::NAN, f64::INFINITY, 1e300, rng.below(10_000) as f64][rng.below(8)])
            .collect();
        let images = [png.to_string(), format!("data:image/png;base64,{png}"), text(&mut rng, 8), String::new()];
        let json = columns_json(&shape, &heads, &marks, "saved $0.27", |index, chars| {
            js_prefix(&images[index % images.len()], chars.min(1 << 20)).to_string()
        });
        let figures: Value = serde_json::from_str(&json).unwrap();
        let items = figures["stats"]["items"].as_u64().unwrap() as usize;
        assert!(items <= entries.max(shape.len()), "{json}");
        assert!(figures["status"]["text"].as_str().unwrap().starts_with("🛡 "));
    }
}

#[test]
fn image_heads_give_the_dimensions_of_the_whole_data() {
    let mut rng = Rng(0x5eed_000a);
    let starts = [
        "",
        "iVBORw0KGgoAAAANSUhEUgAABQAAAAPACAIAAAB/fS41AAAAA",
        "/9j/4AAQSkZJRg",
        "R0lGODlh",
        "data:image/png;base64,",
        "data:",
    ];
    for _ in 0..1000 {
        let data = format!("{}{}", starts[rng.below(starts.len())], text(&mut rng, 8));
        let head = image_head(|chars| js_prefix(&data, chars).to_string());
        assert_eq!(image_dimensions(&head), image_dimensions(&data), "{data:?}");
        // A host that answers anything is read as whatever it answered, never a panic.
        let _ = image_head(|chars| text(&mut rng, chars % 7));
    }
}

/// Mid-run checkpoints over runs of many turns with arbitrary records (the
/// memo), main models, gates and answers: planning and finishing never
/// panic, every edit is a shorter guard note on an output of the run, and
/// the gate figures say what was planned.
#[test]
fn checkpoints_never_panic_and_edit_only_outputs_of_the_run() {
    use context_guard_economics::cache::MainModel;
    use context_guard_guard::checkpoint::{
        plan as plan_checkpoint, plan_json as checkpoint_json, CheckpointInput, Gates,
    };
    use context_guard_guard::memo::PlacedRecord;
    let mut rng = Rng(0x5eed_000a);
    let (mut asked, mut edited) = (0, 0);
    let msg = |v: Value| Message::from_value(v);
    let entry =
        |id: String, m: Message| ContextEntry { id, entry_type: "message".into(), messages: vec![m], raw: None };
    for _ in 0..300 {
        let mut entries = vec![entry("u".into(), msg(json!({"role": "user", "content": text(&mut rng, 5)})))];
        let mut outputs = Vec::new();
        for t in 0..rng.below(14) {
            let tool = rng.pick(&["bash", "read", "recall", "edit", "mcp"]);
            let args = if rng.chance(50) { json!({"command": "t"}) } else { value(&mut rng, 0) };
            entries.push(entry(
                format!("a{t}"),
                msg(json!({"role": "assistant", "content": [{"type": "toolCall", "id": format!("c{t}"), "name": tool, "arguments": args}]})),
            ));
            let pieces = if rng.chance(30) { 400 } else { 40 };
            entries.push(entry(
                format!("r{t}"),
                msg(json!({"role": "toolResult", "toolCallId": format!("c{t}"), "toolName": tool, "isError": rng.chance(10),
                           "content": [{"type": "text", "text": text(&mut rng, pieces)}]})),
            ));
            outputs.push(format!("r{t}"));
        }
        let records: Vec<PlacedRecord> = (0..rng.below(3))
            .filter_map(|_| {
                let results: Vec<Value> = (0..rng.below(4))
                    .map(|_| json!({"kind": rng.pick(&["large", "small", "exchange"]), "entryId": format!("r{}", rng.below(14)),
                        "tool": "bash", "label": "x", "outcome": "kept", "reason": rng.pick(&["chunks", "timeout", "error,chunks"]),
                        "beforeChars": rng.below(9000), "afterChars": rng.below(3000), "jev": ""}))
                    .collect();
                let data = json!({"v": 1, "phase": rng.pick(&["mid-run", "run-end"]), "model": "m", "savedChars": 0,
                    "requests": 1, "inputTokens": 0.0, "costUsd": 0.0, "ms": 1.0, "timedOut": false, "results": results});
                PlacedRecord::from_value(json!({"at": rng.below(entries.len() + 2), "data": if rng.chance(10) { value(&mut rng, 1) } else { data }}))
            })
            .collect();
        let settings = Settings {
            mid_run_min_age_turns: 1 + rng.below(5),
            mid_run_min_turns: 1 + rng.below(10),
            mid_run_batch_chars: 1 + rng.below(20_000),
            mid_run_break_even: rng.chance(35),
            max_segment_chars: 1000 + rng.below(20_000),
            min_result_chars: 1 + rng.below(4000),
            small_result_min_chars: rng.below(500),
            ..Settings::default()
        };
        let model = MainModel {
            provider: rng.pick(&["openai-codex", "anthropic", "faux"]).into(),
            api: rng.pick(&["anthropic-messages", "x"]).into(),
            // The pin's read points: the ids of some results, or none.
            pin: rng.chance(70),
            read_points: (0..rng.below(3)).map(|_| format!("c{}", rng.below(14))).collect(),
            context_tokens: rng.below(300_000),
            prices: [
                Prices::default(),
                Prices { input: 3_000_000, cache_read: 300_000, cache_write: 3_750_000 },
                Prices { input: 1_250_000, cache_read: 125_000, cache_write: 0 },
            ][rng.below(3)],
            // A pass before a prompt, on a cache that lapsed or not.
            idle_ms: rng.chance(30).then(|| rng.below(4_000_000)),
            long_retention: rng.chance(20),
            cache_warming: rng.pick(&["", "off", "idle"]).into(),
            prompt_cache_ms: rng.below(2) * 300_000,
            opening: rng.chance(30),
        };
        let input = CheckpointInput {
            pass: PassInput { entries, settings, model, records, ..PassInput::default() },
            gates: if rng.chance(30) { Gates::EveryEligible } else { Gates::MidRun },
            lag: rng.below(4),
        };
        let c = plan_checkpoint(&input);
        // Its answers landing later, on the same context or one that lost entries (a compaction).
        let mut later = c.plan.pass.clone();
        let mut now = input.pass.clone();
        if rng.chance(50) {
            now.entries.truncate(rng.below(now.entries.len() + 1));
        }
        let anchor = now.entries.last().map(|e| e.id.clone()).unwrap_or_default();
        let _ = context_guard_guard::pass::land(&mut later, &now, &anchor, rng.below(5000) as f64, rng.chance(50));
        // Planned means items to judge; skipped means nothing to ask.
        let planned_items = c.plan.pass.outputs.len() + c.plan.pass.small.len() + c.plan.pass.exchanges.len();
        assert_eq!(c.plan.pass.skipped.is_none(), planned_items > 0, "{:?} {:?}", c.plan.pass.skipped, c.gate);
        assert!(c.plan.pass.skipped.is_none() || c.plan.requests.is_empty());
        let outcomes: Vec<RequestOutcome> = c
            .plan
            .requests
            .iter()
            .map(|r| {
                let n = serde_json::to_value(r).ok().and_then(|v| v["state"]["chunks"].as_object().map(|m| m.len()));
                outcome(&mut rng, n.unwrap_or(0))
            })
            .collect();
        asked += usize::from(!c.plan.requests.is_empty());
        let out = finish(&c.plan.pass, &PassAnswers { outcomes, timed_out: rng.chance(10), ms: 1.0 });
        edited += usize::from(out.entries.len() > 1);
        for e in serde_json::to_value(&out.entries).unwrap().as_array().unwrap() {
            if e["type"] == "context_edit" {
                assert!(outputs.iter().any(|o| e["targetId"] == o.as_str()), "{e}");
                assert!(e["replacement"]["content"][0]["text"].as_str().unwrap().starts_with(MARK));
            }
        }
        let bytes = serde_json::to_vec(&input).unwrap();
        let (planned, gate) = checkpoint_json(&bytes, &[], &[]).unwrap();
        // Against the same input read back (arbitrary JSON arguments may not survive a round trip byte for byte).
        let again = plan_checkpoint(&CheckpointInput::from_value(serde_json::from_slice(&bytes).unwrap()));
        assert_eq!(gate, again.gate);
        assert_eq!(planned.skipped, again.plan.pass.skipped);
        let mut bad = bytes.clone();
        bad.truncate(rng.below(bad.len() + 1));
        let _ = checkpoint_json(&bad, &bad, &[rng.below(9) as u32]);
    }
    // The generator reaches the checkpoint's requests and edits, not only its skips.
    assert!(asked > 30 && edited > 3, "asked {asked}, edited {edited}");
}
