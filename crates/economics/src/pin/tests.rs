use super::*;
use serde_json::json;

const MODEL: &str = "anthropic/claude-sonnet-4-5";
const MIN: f64 = 60_000.0;

fn cc() -> Value {
    json!({"type": "ephemeral", "ttl": "1h"})
}

/// A body as Pi builds it after `n` sequential tool calls: breakpoints on
/// system[0], the last tool and the last message's last block. `outputs`
/// gives each tool result's text.
fn body_with(outputs: &[String]) -> Value {
    let mut messages = vec![json!({"role": "user", "content": "fix the failing tests"})];
    for (i, out) in outputs.iter().enumerate() {
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{i}"), "name": "bash", "input": {"command": "npm test"}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": out}]}));
    }
    let last = messages.len() - 1;
    let content = &mut messages[last]["content"];
    if let Some(a) = content.as_array_mut() {
        let k = a.len() - 1;
        a[k]["cache_control"] = cc();
    } else {
        *content = json!([{"type": "text", "text": content.clone(), "cache_control": cc()}]);
    }
    json!({
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "You are Pi.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "tools": [{"name": "read"}, {"name": "bash", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "messages": messages,
    })
}

fn outputs(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{i}").repeat(6_000)).collect()
}

fn whys(p: &Plan) -> Vec<(usize, usize, Why)> {
    p.marks.iter().map(|m| (m.message, m.block, m.why)).collect()
}

#[test]
fn the_question_gets_pis_rolling_breakpoint_after_1_5_and_12_calls() {
    for n in [1, 5, 12] {
        let mut log = Log::default();
        let p = log.plan(&body_with(&outputs(n)), MODEL, 0.0);
        assert_eq!(whys(&p), vec![(0, 0, Why::Question)], "{n} calls");
        assert_eq!(p.marks[0].cache_control, cc(), "TTL copied");
        assert!(!p.drop_system, "3 of Pi's + 1 fit in 4");
        assert_eq!(p.note, "question");
    }
}

#[test]
fn no_question_before_the_first_call_nor_without_pis_breakpoint() {
    let mut log = Log::default();
    let p = log.plan(&body_with(&[]), MODEL, 0.0);
    assert!(p.marks.is_empty(), "the question is the last message: Pi's own breakpoint is on it");
    let mut b = body_with(&outputs(2));
    b["messages"][4]["content"][0].as_object_mut().map(|o| o.remove("cache_control"));
    assert_eq!(log.plan(&b, MODEL, 0.0).note, "no cache_control from Pi: nothing pinned");
}

#[test]
fn trailing_system_messages_are_skipped_and_a_later_steering_message_is_the_question() {
    let mut b = body_with(&outputs(3));
    let msgs = b["messages"].as_array_mut().unwrap();
    // A steering message joins the tool results of call 2 (message 4).
    msgs[4]["content"].as_array_mut().unwrap().push(json!({"type": "text", "text": "also check lint"}));
    msgs.push(json!({"role": "system", "content": "note from an extension"}));
    let p = Log::default().plan(&b, MODEL, 0.0);
    assert_eq!(whys(&p), vec![(4, 1, Why::Question)]);
}

#[test]
fn four_breakpoints_at_most_system_dropped_first_then_nothing() {
    let mut b = body_with(&outputs(3));
    b["tools"][0]["cache_control"] = cc(); // a fourth breakpoint from someone else
    let p = Log::default().plan(&b, MODEL, 0.0);
    assert_eq!((whys(&p), p.drop_system), (vec![(0, 0, Why::Question)], true));
    assert_eq!(p.note, "question (system breakpoint dropped)");
    b["system"][0].as_object_mut().unwrap().remove("cache_control");
    b["messages"][2]["content"][0]["cache_control"] = cc();
    let p = Log::default().plan(&b, MODEL, 0.0);
    assert_eq!((p.marks.len(), p.drop_system), (0, false));
    assert_eq!(p.note, "4 breakpoints already: nothing pinned");
}

/// Requests of a run of 8 calls, each answered with a cache write, then a
/// request whose output 6 was distilled (an edit after the read point).
fn run_then_edit(edited: usize, at: f64, model_after: &str) -> (Log, Plan) {
    let mut log = Log::default();
    let mut outs = outputs(8);
    for n in 1..=8 {
        log.plan(&body_with(&outs[..n]), MODEL, n as f64 * 1_000.0);
        // Each request reads up to the question (1 k tokens) and writes the rest.
        log.observe(MODEL, 1_000, 5_000);
    }
    outs[edited] = "[distilled]".into();
    let p = log.plan(&body_with(&outs), model_after, at);
    (log, p)
}

#[test]
fn after_an_edit_the_read_point_and_the_write_anchor_come_before_the_question() {
    let (log, p) = run_then_edit(6, 10_000.0, MODEL);
    // Message 12 holds output 5 (the last unchanged result, logged as Pi's
    // rolling breakpoint of request 6); message 14 holds the edited output 6,
    // the last changed block. Pi's 3 and these 3 would be 6: the system
    // breakpoint makes room for one more, and the question, whose prefix the
    // read point's entry holds, is left out.
    assert_eq!(whys(&p), vec![(12, 0, Why::Read), (14, 0, Why::Write)]);
    assert!(p.drop_system);
    assert_eq!(p.note, "read point + write anchor (system breakpoint dropped)");
    // The break-even's read points: every live entry the last request still had.
    let points = log.read_points(MODEL, 10_001.0);
    assert!(points.contains(&"toolu_5".to_string()) && !points.contains(&"toolu_6".to_string()), "{points:?}");
}

#[test]
fn the_anchor_is_at_the_last_changed_block_so_the_next_checkpoint_reads_up_to_it() {
    let mut log = Log::default();
    let mut outs = outputs(12);
    for n in 1..=8 {
        log.plan(&body_with(&outs[..n]), MODEL, n as f64 * 1_000.0);
        log.observe(MODEL, 1_000, 5_000);
    }
    // A checkpoint distils outputs 2..=5 (messages 6..=12); outputs 6 and 7 are the latest turns', not yet
    // judged, and the request also holds the next call's output 8.
    for out in &mut outs[2..=5] {
        *out = "[distilled]".into();
    }
    let p = log.plan(&body_with(&outs[..9]), MODEL, 9_000.0);
    assert_eq!(whys(&p), vec![(4, 0, Why::Read), (12, 0, Why::Write)], "anchored after output 5, not output 2");
    log.observe(MODEL, 2_000, 3_000);
    for n in 10..=11 {
        log.plan(&body_with(&outs[..n]), MODEL, n as f64 * 1_000.0);
        log.observe(MODEL, 4_000, 500);
    }
    // The next checkpoint distils outputs 6..=9: it reads from the anchor.
    for out in &mut outs[6..=9] {
        *out = "[distilled]".into();
    }
    let p = log.plan(&body_with(&outs[..11]), MODEL, 12_000.0);
    assert_eq!(whys(&p)[0], (12, 0, Why::Read));
}

#[test]
fn a_small_write_at_the_end_of_a_long_prefix_is_an_entry() {
    let mut log = Log::default();
    let outs = outputs(8);
    for n in 1..=8 {
        log.plan(&body_with(&outs[..n]), MODEL, n as f64 * 1_000.0);
        // A turn adds under 2 % to what was read: still written, at Pi's rolling breakpoint.
        log.observe(MODEL, 60_000, 900);
    }
    let points = log.read_points(MODEL, 9_000.0);
    for i in 0..7 {
        assert!(points.contains(&format!("toolu_{i}")), "{points:?}");
    }
}

#[test]
fn a_read_point_expires_with_its_ttl() {
    // Pi's cache_control here has ttl 1h: entries live an hour.
    let (_, p) = run_then_edit(6, 61.0 * MIN, MODEL);
    assert_eq!(
        whys(&p),
        vec![(0, 0, Why::Question), (14, 0, Why::Write)],
        "no read point: the question first, then the write anchor"
    );
    let (_, p) = run_then_edit(6, 59.0 * MIN, MODEL);
    assert!(whys(&p).contains(&(12, 0, Why::Read)));
}

#[test]
fn an_edit_before_an_entry_invalidates_it() {
    let (_, p) = run_then_edit(1, 10_000.0, MODEL);
    // Outputs 1..7 changed prefix: only output 0 (message 2) is still read.
    assert_eq!(whys(&p)[0], (2, 0, Why::Read));
    let (_, p) = run_then_edit(0, 10_000.0, MODEL);
    assert_eq!(whys(&p), vec![(0, 0, Why::Question), (2, 0, Why::Write)], "no entry is left before the edit");
}

#[test]
fn a_model_switch_leaves_the_question_pin_alone() {
    let (log, p) = run_then_edit(6, 10_000.0, "anthropic/claude-haiku-4-5");
    assert_eq!(whys(&p), vec![(0, 0, Why::Question)]);
    assert!(log.read_points("anthropic/claude-haiku-4-5", 10_001.0).is_empty());
}

#[test]
fn entries_are_logged_only_past_the_read_and_refreshed_only_when_read_clearly_past() {
    let mut log = Log::default();
    let short = body_with(&outputs(1));
    log.plan(&short, MODEL, 0.0);
    log.observe(MODEL, 0, 2_000);
    let first = log.entries.clone();
    assert!(first.iter().any(|e| e.tool_use_id.as_deref() == Some("toolu_0")), "{first:?}");
    // A response that wrote nothing logs nothing new and refreshes nothing it did not read past.
    let longer = body_with(&outputs(2));
    log.plan(&longer, MODEL, 30.0 * MIN);
    log.observe(MODEL, 10, 0);
    assert_eq!(log.entries, first);
    // Read clearly past output 0's entry: its time moves to that request's.
    log.plan(&longer, MODEL, 40.0 * MIN);
    log.observe(MODEL, 2_000, 0);
    let e = log.entries.iter().find(|e| e.tool_use_id.as_deref() == Some("toolu_0")).unwrap();
    assert_eq!(e.at_ms, 40.0 * MIN);
    // Another model's usage changes nothing.
    log.observe("anthropic/other", 9_999, 9_999);
    assert_eq!(log.entries.iter().find(|e| e.tool_use_id.as_deref() == Some("toolu_0")).unwrap().at_ms, 40.0 * MIN);
}

#[test]
fn string_content_and_odd_bodies_never_panic() {
    for b in [
        json!(null),
        json!({"messages": [{"role": "user"}]}),
        json!({"messages": [{"role": "user", "content": [{"cache_control": 1}]}]}),
    ] {
        let mut log = Log::default();
        let _ = log.plan(&b, MODEL, 0.0);
        log.observe(MODEL, usize::MAX, usize::MAX);
        let _ = log.read_points(MODEL, f64::NAN);
    }
}

#[test]
fn a_run_that_grows_a_little_each_request_logs_each_new_breakpoint() {
    // Each request reads what the one before wrote and writes only the new
    // output (about 6 k characters on 30 k and more): the response's own
    // figures say its last breakpoint was written, the earlier ones read.
    let mut log = Log::default();
    let mut cached_chars = 0usize;
    for n in 1..=6 {
        let body = body_with(&outputs(n));
        let end = prefix::read(&body).blocks.last().map_or(0, |b| b.chars);
        log.plan(&body, MODEL, n as f64);
        // A tokenizer of 3.5 characters a token, not the 4 the pin assumes.
        log.observe(MODEL, cached_chars * 2 / 7, (end - cached_chars) * 2 / 7);
        cached_chars = end;
    }
    let points = log.read_points(MODEL, 10.0);
    for i in 0..6 {
        assert!(points.contains(&format!("toolu_{i}")), "toolu_{i} in {points:?}");
    }
}
