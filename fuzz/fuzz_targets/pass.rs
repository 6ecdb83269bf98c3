//! The run-end pass with an arbitrary output and arbitrary classifier answers,
//! and the boundary forms with arbitrary bytes (input, texts, answers).
#![no_main]

use std::rc::Rc;

use context_guard_base::entry::{ContextEntry, Message};
use context_guard_guard::classify::RequestOutcome;
use context_guard_guard::pass::{finish, finish_json, plan, plan_json, PassAnswers, PassInput};
use context_guard_guard::scanned::Scanned;
use context_guard_guard::settings::Settings;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    // Arbitrary bytes as each boundary form (input, out-of-line texts and
    // their lengths, answers).
    let lengths: Vec<u32> = data.chunks(4).take(4).map(|c| c.iter().map(|&b| u32::from(b)).sum()).collect();
    if let Ok(planned) = plan_json(data, data, &lengths) {
        let _ = finish_json(&planned.state, data);
    }

    // A real pass: the first part is the output, the rest the answers.
    let cut = data.iter().position(|&b| b == 0xff).unwrap_or(data.len());
    let (output, answers) = data.split_at(cut);
    let output = String::from_utf8_lossy(output);
    let entry = |id: &str, v: Value| ContextEntry {
        id: id.into(),
        entry_type: "message".into(),
        messages: vec![Message::from_value(v)],
        raw: None,
    };
    let entries = vec![
        entry("u", json!({"role": "user", "content": "q"})),
        entry(
            "a",
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "x"}}]}),
        ),
        entry(
            "r",
            json!({"role": "toolResult", "toolCallId": "c", "toolName": "bash", "content": [{"type": "text", "text": output}]}),
        ),
        entry("z", json!({"role": "assistant", "content": [{"type": "text", "text": "done"}]})),
    ];
    let settings = Settings { min_result_chars: 1, min_run_chars: 0, max_segment_chars: 1000, ..Settings::default() };
    // Its secrets found when it arrived, as the extension does after each turn (the same plan either way).
    let mut scanned = Scanned::default();
    scanned.note(&entries, &settings);
    let input = PassInput { entries, settings, classifier: data.first() != Some(&0), ..PassInput::default() };
    let p = plan(&PassInput { scanned: Rc::new(scanned), ..input.clone() });
    assert_eq!(p.requests, plan(&input).requests, "the scans found on arrival change nothing sent");
    let parsed: Value = serde_json::from_slice(answers.get(1..).unwrap_or(&[])).unwrap_or(Value::Null);
    let outcomes = match parsed {
        Value::Array(items) => items.into_iter().map(RequestOutcome::from_value).collect(),
        v => p
            .requests
            .iter()
            .map(|_| RequestOutcome::Answered { answers: v.clone().into(), input_tokens: 1.0, cost_usd: 0.0 })
            .collect(),
    };
    let _ = finish(&p.pass, &PassAnswers { outcomes, timed_out: false, ms: 1.0 });
});
