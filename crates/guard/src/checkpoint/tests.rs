//! The checkpoint's gates with worked numbers, its request, and how run end
//! treats what a checkpoint kept or distilled.

use super::*;
use crate::cache::{Basis, BreakEven, Cache, MainModel, Rule};
use crate::classify::RequestOutcome;
use crate::decide::Outcome as ResultOutcome;
use crate::entry::{Block, ContextEntry, Message};
use crate::memo::tests::record;
use crate::memo::PlacedRecord;
use crate::outcome::{Draft, ResultKind};
use crate::pass::tests::{answer_items, answer_keeping};
use crate::pass::{finish, PassAnswers};
use crate::settings::Settings;
use crate::testing::{call, entry, result, say, user};
use serde_json::{json, Value};

/// Every call is `bash {"command":"t"}`: 4 + 15 = 19 characters.
const CALL: usize = 19;

/// A run: the prompt, then one turn per size (a call and its output of that
/// many characters, `line\n` repeated), the last turn being the current one.
fn run(prompt: &str, sizes: &[usize]) -> Vec<ContextEntry> {
    let mut e = vec![entry("u", user(prompt))];
    for (k, &n) in sizes.iter().enumerate() {
        e.push(entry(&format!("a{k}"), call(&format!("c{k}"), "bash", json!({"command": "t"}))));
        e.push(entry(&format!("r{k}"), result(&format!("c{k}"), "bash", &"line\n".repeat(n / 5))));
    }
    e
}

/// Three earlier exchanges of 3,028 characters each (prompt 5, call 19,
/// output 3,000, reply 4); the last two are recent, so only `o0` is eligible.
fn earlier() -> Vec<ContextEntry> {
    let mut e = Vec::new();
    for n in 0..3 {
        e.push(entry(&format!("o{n}"), user(&format!("old {n}"))));
        e.push(entry(&format!("oa{n}"), call(&format!("oc{n}"), "bash", json!({"command": "t"}))));
        e.push(entry(&format!("or{n}"), result(&format!("oc{n}"), "bash", &"x".repeat(3000))));
        e.push(entry(&format!("os{n}"), say("done")));
    }
    e
}

/// A checkpoint's input at default settings, except `midRunMinTurns` 1: the
/// short runs here weigh the other gates (its own test sets it back).
fn input(entries: Vec<ContextEntry>, provider: &str, api: &str) -> CheckpointInput {
    CheckpointInput {
        pass: PassInput {
            entries,
            model: MainModel { provider: provider.into(), api: api.into(), ..MainModel::default() },
            settings: Settings { mid_run_min_turns: 1, ..Settings::default() },
            ..PassInput::default()
        },
        gates: Gates::MidRun,
        lag: 0,
    }
}

#[test]
fn no_checkpoint_before_the_runs_min_turn_unless_past_the_room_trigger() {
    // Seven turns of 20,000 characters, the money rule off (so only the gates decide), the default 8.
    let at = |turns: usize, context_tokens: usize| {
        let mut i = input(run("t", &vec![20_000; turns]), "faux", "faux");
        i.pass.settings = Settings { mid_run_break_even: false, ..Settings::default() };
        i.pass.model.context_tokens = context_tokens;
        plan(&i)
    };
    let c = at(7, 1_000);
    assert_eq!((c.plan.pass.skipped, c.gate.turns, c.gate.min_turns), (Some(Skip::EarlyInRun), 7, 8));
    // Turn 8: the gate is passed.
    assert_eq!(at(8, 1_000).plan.pass.skipped, None);
    // Past the room trigger (40,000 tokens), a batch expected to take out 10,000 tokens goes at turn 7:
    // 6 × 20,000 pending × the prior 60 % = 72,000 characters, 18,000 tokens.
    let c = at(7, 45_000);
    assert_eq!((c.plan.pass.skipped, c.gate.room), (None, true));
    // With the money rule on, early is early whatever it says.
    let mut i = input(run("t", &[20_000; 7]), "faux", "faux");
    i.pass.settings.mid_run_min_turns = 8;
    i.pass.earlier_runs = vec![1_000];
    assert_eq!(plan(&i).plan.pass.skipped, Some(Skip::EarlyInRun));
}

fn sizes(big: usize, small: usize) -> Vec<usize> {
    let mut v = vec![20_000; big];
    v.extend(std::iter::repeat_n(100, small));
    v
}

#[test]
fn a_prefix_cache_pays_off_from_the_first_eligible_output() {
    // 40 turns: outputs of turns 1–4 are 20,000 each, the rest 100 (below
    // smallResultMinChars). Pending 80,000; rewrite from r0: outputs 80,000 +
    // 36 × 100 + 39 later calls × 19 = 84,341.
    let c = plan(&input(run("fix the tests", &sizes(4, 36)), "faux", "faux"));
    assert_eq!(c.plan.pass.skipped, None);
    let g = &c.gate;
    assert_eq!((g.outputs, g.exchanges, g.pending_chars, g.batch_chars), (4, 0, 80_000, 10_000));
    assert_eq!((g.turns, g.factor, g.rewrite_chars), (40, 16, 80_000 + 3_600 + 39 * CALL));
    // No catalog prices (faux): the rule in tokens. No earlier pass: 60% of the pending
    // characters expected to go; no earlier run: as many later requests as turns so far.
    // 48,000 × 40 = 1,920,000 ≥ 16 × 84,341 = 1,349,456.
    assert_eq!((g.expected_chars, g.later, g.gain_micros, g.room), (48_000, 40, 0, false));
    assert_eq!((g.cache, g.basis), (Some(Cache::Prefix), Some(Basis::FirstEdit)));
    // The decision goes into the checkpoint's record, for /guard.
    let decision = BreakEven {
        rule: Rule::Checkpoint,
        saved_chars: 80_000,
        requests: 40,
        factor: 16,
        rewrite_chars: 84_341,
        cache: Cache::Prefix,
        basis: Basis::FirstEdit,
        expected_chars: 48_000,
        later: 40,
        paid_off: true,
        ..BreakEven::default()
    };
    assert_eq!(c.plan.pass.break_even, [decision]);
    let out = finish(&c.plan.pass, &answer_keeping(&c.plan, "nothing"));
    assert_eq!(out.record.unwrap().break_even, [decision]);
    assert_eq!(c.plan.pass.phase, Phase::MidRun);
    assert_eq!(c.plan.pass.outputs.len(), 4);
    assert_eq!(c.plan.pass.settings.chunk_keep_threshold, Settings::default().mid_run_chunk_keep_threshold);
}

#[test]
fn a_short_run_does_not_pay_off() {
    // 8 turns: expected 48,000 × 8 = 384,000 < 16 × (80,400 + 7 × 19 = 80,533) = 1,288,528.
    let c = plan(&input(run("fix the tests", &sizes(4, 4)), "faux", "faux"));
    assert_eq!(c.plan.pass.skipped, Some(Skip::NotPayingOff));
    assert_eq!((c.gate.pending_chars, c.gate.turns, c.gate.rewrite_chars, c.gate.factor), (80_000, 8, 80_533, 16));
    assert!(c.plan.requests.is_empty());
    // midRunBreakEven false checkpoints purely for room.
    let mut i = input(run("fix the tests", &sizes(4, 4)), "faux", "faux");
    i.pass.settings.mid_run_break_even = false;
    let c = plan(&i);
    assert_eq!((c.plan.pass.skipped, c.gate.factor), (None, 0));
}

#[test]
fn codex_and_anthropic_weigh_the_whole_context() {
    // A 150,000-character prompt before the outputs: the prefix rule does not
    // count it, the whole-context rules do. Whole = 150,000 + 40 × 19 + 83,600 = 234,360.
    let whole = 150_000 + 40 * CALL + 83_600;
    let entries = run(&"q".repeat(150_000), &sizes(4, 36));
    // The money rule alone (the room trigger is tested below).
    let input = |entries, provider, api| {
        let mut i = input(entries, provider, api);
        i.pass.settings.mid_run_room_tokens = 0;
        i
    };
    let prefix = plan(&input(entries.clone(), "faux", "faux"));
    assert_eq!((prefix.plan.pass.skipped, prefix.gate.rewrite_chars), (None, 84_341));
    // Codex: 48,000 × 40 = 1,920,000 < 13 × 234,360 = 3,046,680.
    let codex = plan(&input(entries.clone(), "openai-codex", "openai-codex-responses"));
    assert_eq!(
        (codex.plan.pass.skipped, codex.gate.factor, codex.gate.rewrite_chars),
        (Some(Skip::NotPayingOff), 13, whole)
    );
    // Anthropic with the pin off: 1,920,000 < 16 × 234,360 = 3,749,760.
    let anthropic = plan(&input(entries.clone(), "anthropic", "anthropic-messages"));
    assert_eq!(anthropic.plan.pass.skipped, Some(Skip::NotPayingOff));
    assert_eq!((anthropic.gate.factor, anthropic.gate.rewrite_chars), (16, whole));
    assert_eq!((anthropic.gate.cache, anthropic.gate.basis), (Some(Cache::Anthropic), Some(Basis::Whole)));
    // With the pin, the question is cached: the rewrite is what follows it,
    // 234,360 − 150,000 = 84,360; 1,920,000 ≥ 16 × 84,360 = 1,349,760. A read
    // point on r0, itself edited, is no breakpoint for it.
    let mut pinned = input(entries, "anthropic", "anthropic-messages");
    (pinned.pass.model.pin, pinned.pass.model.read_points) = (true, vec!["c0".into()]);
    let pinned = plan(&pinned);
    assert_eq!(pinned.plan.pass.skipped, None);
    assert_eq!((pinned.gate.factor, pinned.gate.rewrite_chars, pinned.gate.basis), (16, 84_360, Some(Basis::Question)));
}

#[test]
fn past_the_room_trigger_a_batch_goes_without_the_money_rule() {
    // The Codex case above: 48,000 expected × 40 < 13 × 234,360, so the rule says no. The context is
    // 234,360 characters, 58,590 tokens by the measure (Pi gave none): past 40,000, and 12,000 tokens
    // are expected to go, at least 10,000.
    let entries = run(&"q".repeat(150_000), &sizes(4, 36));
    let c = plan(&input(entries.clone(), "openai-codex", "openai-codex-responses"));
    assert_eq!((c.plan.pass.skipped, c.gate.room, c.gate.expected_chars), (None, true, 48_000));
    assert!(c.plan.pass.break_even[0].room && c.plan.pass.break_even[0].paid_off);
    // Pi's own estimate wins over the measure: below the trigger, the rule decides.
    let mut below = input(entries.clone(), "openai-codex", "openai-codex-responses");
    below.pass.model.context_tokens = 39_999;
    assert_eq!((plan(&below).plan.pass.skipped, plan(&below).gate.room), (Some(Skip::NotPayingOff), false));
    // A batch expected to take out less than the minimum does not go on room.
    let mut small = input(entries, "openai-codex", "openai-codex-responses");
    small.pass.settings.mid_run_room_min_tokens = 12_001;
    assert_eq!(plan(&small).plan.pass.skipped, Some(Skip::NotPayingOff));
}

#[test]
fn when_the_whole_batch_fails_the_outputs_alone_go_and_exchanges_wait() {
    // 28 turns after three earlier exchanges. Whole batch: 80,000 + 3,028 =
    // 83,028 pending, 60% = 49,816 × 28 = 1,394,848 < 16 × the whole context
    // (9,084 + 13 + 28 × 19 + 82,400 = 92,029) = 1,472,464. Outputs alone:
    // 48,000 × 28 = 1,344,000 ≥ 16 × (82,400 + 27 × 19 = 82,913) = 1,326,608.
    let mut entries = earlier();
    entries.extend(run("fix the tests", &sizes(4, 24)));
    let c = plan(&input(entries.clone(), "faux", "faux"));
    assert_eq!(c.plan.pass.skipped, None);
    let g = &c.gate;
    assert!(g.outputs_only);
    assert_eq!((g.outputs, g.exchanges, g.pending_chars, g.turns, g.rewrite_chars), (4, 1, 80_000, 28, 82_913));
    assert!(c.plan.pass.exchanges.is_empty());
    // With two more turns the whole batch pays (49,816 × 30 = 1,494,480 ≥ 16 × 92,267) and the exchange goes with it.
    let mut more = earlier();
    more.extend(run("fix the tests", &sizes(4, 26)));
    let c = plan(&input(more, "faux", "faux"));
    assert_eq!((c.gate.outputs_only, c.plan.pass.exchanges.len()), (false, 1));
}

#[test]
fn the_age_gate_and_the_batch() {
    let aged = |entries, age| {
        let mut i = input(entries, "faux", "faux");
        i.pass.settings.mid_run_min_age_turns = age;
        plan(&i)
    };
    // Four turns: the first output is 3 turns old, below midRunMinAgeTurns 4.
    let c = aged(run("t", &[20_000, 20_000, 20_000, 20_000]), 4);
    assert_eq!((c.plan.pass.skipped, c.gate.turns), (Some(Skip::NothingEligible), 4));
    // Five turns: only the first is 4 turns old, 20,000 < 60,000.
    let c = aged(run("t", &[20_000; 5]), 4);
    assert_eq!(c.gate.batch_chars, 10_000, "the default");
    let mut i = input(run("t", &[20_000; 5]), "faux", "faux");
    i.pass.settings.mid_run_min_age_turns = 4;
    i.pass.settings.mid_run_batch_chars = 60_000;
    let c = plan(&i);
    assert_eq!((c.plan.pass.skipped, c.gate.outputs, c.gate.pending_chars), (Some(Skip::BelowBatch), 1, 20_000));
    // The default age, 1: every output but the last turn's, 3 × 20,000 reach the batch at four turns,
    // and then the rule in tokens says no: 36,000 expected × 4 later requests < 16 × the rewrite.
    let c = plan(&input(run("t", &[20_000; 4]), "faux", "faux"));
    assert_eq!((c.plan.pass.skipped, c.gate.outputs, c.gate.pending_chars), (Some(Skip::NotPayingOff), 3, 60_000));
    // midRunBatchCharsOpenAI is the batch for openai-codex.
    let mut i = input(run("t", &[20_000; 5]), "openai-codex", "openai-codex-responses");
    i.pass.settings.mid_run_batch_chars_openai = 10_000;
    i.pass.settings.mid_run_break_even = false;
    let c = plan(&i);
    assert_eq!((c.plan.pass.skipped, c.gate.batch_chars), (None, 10_000));
    // Every eligible: no age, batch or break-even.
    let mut i = input(run("t", &[20_000, 500]), "faux", "faux");
    i.gates = Gates::EveryEligible;
    let c = plan(&i);
    assert_eq!((c.plan.pass.skipped, c.gate.outputs, c.gate.batch_chars, c.gate.factor), (None, 2, 0, 0));
    assert_eq!((c.plan.pass.outputs.len(), c.plan.pass.small.len()), (1, 1));
}

#[test]
fn off_no_classifier_no_run() {
    let mut i = input(run("t", &sizes(4, 36)), "faux", "faux");
    i.pass.settings.mid_run = false;
    assert_eq!(plan(&i).plan.pass.skipped, Some(Skip::MidRunOff));
    i.gates = Gates::EveryEligible;
    assert_eq!(plan(&i).plan.pass.skipped, None, "midRun is the mid-run gate's setting only");
    i.pass.settings.enabled = false;
    assert_eq!(plan(&i).plan.pass.skipped, Some(Skip::Off));
    let mut i = input(run("t", &sizes(4, 36)), "faux", "faux");
    i.pass.classifier = false;
    assert_eq!(plan(&i).plan.pass.skipped, Some(Skip::NoClassifier));
    assert_eq!(plan(&input(Vec::new(), "", "")).plan.pass.skipped, Some(Skip::NoRun));
}

#[test]
fn the_memo_and_recall_outputs() {
    let mut entries = run("t", &sizes(4, 36));
    // r1 was judged at an earlier checkpoint; r2's answer timed out (asked again).
    let data = record("mid-run", &[("large", "r1", "whole-needed"), ("large", "r2", "timeout")]);
    entries.insert(20, ContextEntry { id: "rec".into(), entry_type: "custom".into(), messages: vec![], raw: None });
    let records = vec![PlacedRecord::from_value(json!({"at": 20, "data": data})).unwrap()];
    // r3 is a recall output.
    if let [Message::ToolResult { tool_name, .. }] = entries[8].messages.as_mut_slice() {
        *tool_name = "recall".into();
    }
    if let [Message::Assistant { content, .. }] = entries[7].messages.as_mut_slice() {
        content[0] = Block::ToolCall { id: "c3".into(), name: "recall".into(), arguments: json!({"entryId": "x"}) };
    }
    let mut i = input(entries, "faux", "faux");
    i.pass.records = records;
    i.pass.settings.mid_run_break_even = false;
    i.pass.settings.mid_run_batch_chars = 40_000;
    let c = plan(&i);
    let ids: Vec<&str> = c.plan.pass.outputs.iter().map(|o| o.entry_id.as_str()).collect();
    assert_eq!(ids, ["r0", "r2"]);
}

fn chunks_and_questions(c: &Checkpoint, at: usize) -> Value {
    serde_json::to_value(&c.plan.requests[at]).unwrap()
}

#[test]
fn the_request_has_progress_later_calls_and_superseded_and_no_answer() {
    let mut entries = run("fix the tests", &sizes(4, 36));
    // Notes: an earlier one and the latest.
    entries.insert(3, entry("n1", say("Running the tests first.")));
    entries.push(entry("n2", say("Fixed parser.rs; rerunning.")));
    let c = plan(&input(entries, "faux", "faux"));
    let v = chunks_and_questions(&c, 0);
    let st = &v["state"];
    assert!(st.get("final_answer").is_none() && st.get("agent_notes_during_the_run").is_none());
    assert_eq!(st["agent_progress"]["latest_note"], "Fixed parser.rs; rerunning.");
    assert_eq!(st["agent_progress"]["earlier_notes"], "Running the tests first.");
    // r0 was followed by 39 calls: the first and last 15 around a gap line.
    let later = st["later_tool_calls"].as_array().unwrap();
    assert_eq!(later.len(), 31);
    assert_eq!(later[15], "[… 9 more calls …]");
    assert_eq!(later[0], "bash `t`");
    assert_eq!(st["superseded"], "the same command was run again later in the run");
    assert!(st["situation"].as_str().unwrap().starts_with("A coding agent is still working"));
    let q = &v["questions"];
    assert!(q["chunk_1"]["instructions"]
        .as_str()
        .unwrap()
        .starts_with("To finish user_question, will the agent still need"));
    assert!(q["keep_whole"]["instructions"].as_str().unwrap().contains("already acted on"));
    // The fast writer writes the checkpoint's fields as serde_json does.
    assert_eq!(crate::wire::requests(&c.plan.requests, &[]), serde_json::to_string(&c.plan.requests).unwrap());
}

/// Applies a checkpoint's drafts to the entries as Pi's projection shows
/// them: the edited result's visible content replaced, its raw kept; the
/// record appended as a custom entry.
fn apply(entries: &mut Vec<ContextEntry>, drafts: &[Draft]) -> Vec<PlacedRecord> {
    let mut records = Vec::new();
    for d in drafts {
        match d {
            Draft::ContextEdit { target_id, replacement: Some(r) } => {
                let e = entries.iter_mut().find(|e| &e.id == target_id).unwrap();
                let raw = e.messages[0].clone();
                if let Message::ToolResult { content, .. } = &mut e.messages[0] {
                    *content = r.content.iter().map(|b| Block::Text { text: b.text.clone() }).collect();
                }
                e.raw = Some(raw);
            }
            Draft::Custom { data, .. } => {
                entries.push(ContextEntry {
                    id: "rec".into(),
                    entry_type: "custom".into(),
                    messages: vec![],
                    raw: None,
                });
                records.push(PlacedRecord { at: entries.len() - 1, record: data.clone() });
            }
            Draft::ContextEdit { .. } => {}
        }
    }
    records
}

#[test]
fn kept_outputs_are_judged_again_at_run_end_and_distilled_ones_are_not() {
    let mut entries = run("fix the tests", &sizes(4, 36));
    // r0 keeps only the chunk with a marker line; the others answer keep_whole.
    if let [Message::ToolResult { content, .. }] = entries[2].messages.as_mut_slice() {
        content[0] = Block::Text { text: format!("{}FAIL parser\n{}", "line\n".repeat(2000), "line\n".repeat(1998)) };
    }
    let c = plan(&input(entries.clone(), "faux", "faux"));
    let mut answers = answer_keeping(&c.plan, "FAIL parser");
    for (k, o) in c.plan.pass.outputs.iter().enumerate().skip(1) {
        let request = o.segments[0].request.unwrap();
        answers.outcomes[request] = RequestOutcome::Answered {
            answers: json!({"keep_whole": {"probability": 0.9}, "focus": {"choice": "whole", "confidence": 0.9}})
                .into(),
            input_tokens: 1.0,
            cost_usd: 0.0,
        };
        assert_eq!(o.entry_id, format!("r{k}"));
    }
    let out = finish(&c.plan.pass, &answers);
    let rec = out.record.clone().unwrap();
    assert_eq!(rec.phase, Phase::MidRun);
    let outcomes: Vec<ResultOutcome> = rec.results.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes[0], ResultOutcome::Distilled);
    assert!(outcomes[1..].iter().all(|o| *o == ResultOutcome::Kept));
    let records = apply(&mut entries, &out.entries);

    // The next checkpoint judges none of them again (the memo).
    let mut again = input(entries.clone(), "faux", "faux");
    again.pass.records = records.clone();
    assert_eq!(plan(&again).plan.pass.skipped, Some(Skip::NothingEligible));

    // Run end: the final answer, then the kept outputs are candidates again; the distilled one is not.
    entries.push(entry("end", say("All tests pass.")));
    let run_end = crate::pass::plan(&PassInput { entries, records, ..PassInput::default() });
    let ids: Vec<&str> = run_end.pass.outputs.iter().map(|o| o.entry_id.as_str()).collect();
    assert_eq!(ids, ["r1", "r2", "r3"]);
    assert_eq!(run_end.pass.phase, Phase::RunEnd);
}

#[test]
fn exchanges_judged_mid_run_are_not_asked_again_in_the_run() {
    // 30 turns: the whole batch pays (see above), the exchange with it.
    let mut entries = earlier();
    entries.extend(run("fix the tests", &sizes(4, 26)));
    let c = plan(&input(entries.clone(), "faux", "faux"));
    assert_eq!(c.plan.pass.exchanges.len(), 1);
    let out = finish(&c.plan.pass, &answer_items(&c.plan, |_| 0.9));
    let rec = out.record.clone().unwrap();
    let ex: Vec<_> = rec.results.iter().filter(|r| r.kind == ResultKind::Exchange).collect();
    assert_eq!((ex[0].entry_id.as_str(), ex[0].reason.as_str()), ("o0", "related"));
    let records = apply(&mut entries, &out.entries);
    entries.push(entry("end", say("done")));
    let run_end = crate::pass::plan(&PassInput { entries, records, ..PassInput::default() });
    assert!(run_end.pass.exchanges.is_empty(), "judged in this run already");
}

#[test]
fn the_boundary_form_plans_the_same_checkpoint() {
    let i = input(run("fix the tests", &sizes(4, 36)), "faux", "faux");
    let (planned, gate) = plan_json(&serde_json::to_vec(&i).unwrap(), &[], &[]).unwrap();
    let c = plan(&i);
    assert_eq!(gate, c.gate);
    assert_eq!(planned.requests, crate::wire::requests_compact(&c.plan.requests, &[]));
    let written = crate::wire::tests::written_out(&planned.requests);
    assert_eq!(written, serde_json::to_value(&c.plan.requests).unwrap());
    assert_eq!(planned.state, c.plan.pass);
    let mut v = serde_json::to_value(&i).unwrap();
    v["gates"] = json!("every-eligible");
    let (_, gate) = plan_json(&serde_json::to_vec(&v).unwrap(), &[], &[]).unwrap();
    assert_eq!(gate.gates, Gates::EveryEligible);
    let failed = finish(&c.plan.pass, &PassAnswers { outcomes: vec![], timed_out: true, ms: 8000.0 });
    assert_eq!(failed.entries.len(), 1, "a timed-out checkpoint edits nothing, it only records");
}

#[test]
fn a_judge_that_costs_more_than_the_edits_save_is_not_asked() {
    use crate::pass::JudgePrice;
    let judged = |main_per_million: f64, gates: Gates| {
        let mut i = input(run("fix the tests", &sizes(4, 36)), "faux", "faux");
        (i.pass.judge, i.gates) = (Some(JudgePrice { input_per_million: 1.0, main_per_million }), gates);
        plan(&i)
    };
    // 4 outputs of 20,000 chars, one request each, 40 requests so far. The judge at $1/M:
    // at least (80,000 + 4 system prompts) / 4 tokens = 20,000 + system µ$.
    let cost = (80_000 + 4 * crate::judge::SYSTEM.len()) / 4;
    // Main at $0.02/M: at most 20,000 tokens × $0.02/M = 400 µ$ a request × 40 = 16,000 µ$ < cost.
    let dear = judged(0.02, Gates::MidRun);
    assert_eq!(dear.plan.pass.skipped, Some(Skip::JudgeNotWorthIt));
    assert!(dear.plan.requests.is_empty());
    assert_eq!((dear.gate.judge_cost_micros, dear.gate.judge_saving_micros), (cost, 16_000));
    // Main at $0.30/M: 6,000 µ$ a request × 40 = 240,000 µ$ ≥ cost.
    let worth = judged(0.3, Gates::MidRun);
    assert_eq!((worth.plan.pass.skipped, worth.plan.requests.len()), (None, 4));
    assert_eq!((worth.gate.judge_cost_micros, worth.gate.judge_saving_micros), (cost, 240_000));
    // Before compacting the checkpoint is for room: the judge is not weighed.
    let room = judged(0.02, Gates::EveryEligible);
    assert_eq!((room.plan.pass.skipped, room.plan.requests.len(), room.gate.judge_cost_micros), (None, 4, 0));
    // A run end's skip (`Gate::of_run_end`, from the weighing `pass::plan` keeps when it sent nothing) says so;
    // how /guard shows either skip is tested with the summary (`summary.rs`).
    let w = crate::pass::JudgeWeighed { cost_micros: 160_000, saving_micros: 14_400 };
    let pass = PassState { judge: Some(w), requests_so_far: 3, ..PassState::default() };
    assert_eq!(Gate::of_run_end(&PassState { judge: None, ..pass.clone() }), None);
    let g = Gate::of_run_end(&pass).unwrap();
    assert_eq!((g.run_end, g.turns, g.judge_cost_micros, g.judge_saving_micros), (true, 3, 160_000, 14_400));
}

#[test]
fn a_checkpoint_planned_a_turn_ahead_takes_the_outputs_a_turn_younger() {
    // The judge in the background lands a turn later: planned with lag 1, the age gate lets in the current
    // turn's output (0 turns old now, 1 when it lands), and the turn gate counts the turn it lands at.
    let mut k = input(run("fix the tests", &sizes(4, 0)), "faux", "faux");
    assert_eq!(plan(&k).gate.outputs, 3);
    k.lag = 1;
    assert_eq!(plan(&k).gate.outputs, 4);
    let mut j = input(run("fix the tests", &sizes(4, 0)), "faux", "faux");
    j.pass.settings.mid_run_min_turns = 5;
    assert_eq!(plan(&j).plan.pass.skipped, Some(Skip::EarlyInRun), "turn 4 of a run whose checkpoints start at turn 5");
    j.lag = 1;
    assert_ne!(plan(&j).plan.pass.skipped, Some(Skip::EarlyInRun), "planned at turn 4, it lands at turn 5");
}

#[test]
fn late_answers_that_would_have_paid_where_planned_are_carried() {
    // Sonnet 4.5's prices, four outputs of 20,000 and eight of 100: the checkpoint pays off where planned.
    let mut inp = input(run("fix the tests", &sizes(4, 8)), "anthropic", "anthropic-messages");
    inp.pass.model.prices = crate::worth::Prices { input: 3_000_000, cache_read: 300_000, cache_write: 3_750_000 };
    let c = plan(&inp);
    assert_eq!(c.plan.pass.skipped, None);
    let answers = answer_keeping(&c.plan, "nothing");
    let edited =
        |o: &crate::outcome::Outcome| o.entries.iter().filter(|d| matches!(d, Draft::ContextEdit { .. })).count();
    let planned = finish(&c.plan.pass, &answers);
    assert!(edited(&planned) > 0 && !planned.carry);
    // A large output came while the judge worked: where the answers land, the rewrite no longer pays.
    let mut now = inp.pass.clone();
    now.entries.push(entry("a9", call("c9", "bash", json!({"command": "cat big.log"}))));
    now.entries.push(entry("r9", result("c9", "bash", &"日本😀 log line\n".repeat(60_000))));
    let mut state = c.plan.pass.clone();
    crate::pass::land(&mut state, &now, "r11", 0.0, false);
    let late = finish(&state, &answers);
    assert_eq!((edited(&late), late.carry), (0, true), "{:?}", late.break_even);
    // Landed again where another pass edits r9: only the rewrite before it is weighed, and it pays.
    now.judging = vec!["r9".into()];
    crate::pass::land(&mut state, &now, "r11", 0.0, false);
    let carried = finish(&state, &answers);
    assert_eq!((edited(&carried), carried.carry), (edited(&planned), false));
    assert_eq!(carried.record.and_then(|r| r.late).map(|l| l.carried), Some(1));
    // A run end's answers that wait are not carried: a later run end weighs them again.
    let mut run_end = c.plan.pass.clone();
    run_end.phase = Phase::RunEnd;
    now.judging.clear();
    crate::pass::land(&mut run_end, &now, "r11", 0.0, false);
    let waits = finish(&run_end, &answers);
    assert!(!waits.carry);
    // Nor are answers whose outputs left the context meanwhile (a compaction): nothing waits.
    let mut gone = now.clone();
    gone.entries.retain(|e| !e.id.starts_with('r') || e.id == "r9");
    let mut state = c.plan.pass.clone();
    crate::pass::land(&mut state, &gone, "r11", 0.0, false);
    assert!(!finish(&state, &answers).carry);
}
