//! Whole items (docs/GUARD.md, same heading): small outputs judged with one bool each, and the
//! batching all whole items share.
//!
//! For: the small candidates of a run (`smallResultMinChars` up to
//! `minResultChars`, the large outputs' candidate rules), whether a later call
//! superseded each, their batched classifier requests, what an answer means
//! for one item, and the one-line stub. Not for: old exchanges (`exchange`,
//! which uses the batching and the item answer from here) or images
//! (`images`, no classifier).

use serde::Serialize;
use serde_json::Value;

use crate::classify::{
    earlier, BoolCriteria, ClassifierAnswer, ClassifierContext, ClassifierQuestion, Ordered, RequestOutcome, RunFields,
    SmallItem, SmallState, State,
};
use crate::entry::{Block, ContextEntry};
use crate::read::Fields;
use crate::render::{recall_call, tool_label, MARK};
use crate::run::{run_outputs, Output, Run};
use crate::settings::Settings;
use crate::text::{clip_middle, js_len, short_count};

/// A small output is sent with at most this many characters.
pub const SMALL_OUTPUT_MAX: usize = 4000;
/// At most this many items in one request.
pub const MAX_ITEMS: usize = 40;

/// A small candidate and why a later call outdated it, if one did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SmallOutput {
    pub output: Output,
    pub superseded: Option<String>,
}

/// The small candidates of the run: the large outputs' rules, `smallResultMinChars` ≤
/// size < `minResultChars` (`smallResultMinChars` 0 turns them off).
pub fn small_outputs(entries: &[ContextEntry], run: &Run, s: &Settings) -> Vec<SmallOutput> {
    small_of(run_outputs(entries, run, s), entries, run, s)
}

/// [`small_outputs`] of candidates already read by `run_outputs` (see `run::large_of`).
pub fn small_of(candidates: Vec<Output>, entries: &[ContextEntry], run: &Run, s: &Settings) -> Vec<SmallOutput> {
    if s.small_result_min_chars == 0 {
        return Vec::new();
    }
    let outputs: Vec<Output> = candidates
        .into_iter()
        .filter(|o| o.chars >= s.small_result_min_chars && o.chars < s.min_result_chars)
        .collect();
    if outputs.is_empty() {
        return Vec::new();
    }
    let calls = run_calls(entries, run);
    outputs
        .into_iter()
        .map(|output| {
            let later = calls.iter().filter(|(i, _, _)| *i > output.entry_index).map(|(_, n, a)| (*n, *a));
            let superseded = superseded_by(&output.tool, &output.arguments, later);
            SmallOutput { output, superseded }
        })
        .collect()
}

/// Every call of the run with the index of the entry it is in, in order.
pub fn run_calls<'a>(entries: &'a [ContextEntry], run: &Run) -> Vec<(usize, &'a str, &'a Value)> {
    entries
        .iter()
        .enumerate()
        .skip(run.prompt_index)
        .flat_map(|(i, e)| {
            e.messages.iter().flat_map(move |m| match m {
                crate::entry::Message::Assistant { content, .. } => content
                    .iter()
                    .filter_map(|b| match b {
                        Block::ToolCall { name, arguments, .. } => Some((i, name.as_str(), arguments)),
                        _ => None,
                    })
                    .collect::<Vec<_>>(),
                _ => Vec::new(),
            })
        })
        .collect()
}

fn path_of(args: &Value) -> Option<&str> {
    ["path", "file_path"].into_iter().find_map(|k| args.get(k).and_then(Value::as_str))
}

/// A command as compared for "run again": whitespace collapsed, a trailing
/// `2>&1` dropped.
fn normalized_command(c: &str) -> String {
    let words: Vec<&str> = c.split_whitespace().collect();
    let words = match words.split_last() {
        Some((&"2>&1", rest)) => rest,
        _ => &words[..],
    };
    crate::text::join(words, " ")
}

/// Whether a later call outdated this one (superseded it): a `read` whose
/// file was later edited or written, or read again with the same
/// offset/limit; a command run again; any other tool called again with
/// identical arguments.
pub fn superseded_by<'a>(
    tool: &str,
    args: &Value,
    later: impl Iterator<Item = (&'a str, &'a Value)>,
) -> Option<String> {
    // This call's command, normalized once for all the later calls.
    let command = match tool {
        "bash" => Some(normalized_command(args.get("command").and_then(Value::as_str)?)),
        _ => None,
    };
    for (name, a) in later {
        match tool {
            "read" => {
                let path = path_of(args)?;
                if (name == "edit" || name == "write") && path_of(a) == Some(path) {
                    return Some("the file was changed later in the run".to_string());
                }
                if name == "read"
                    && path_of(a) == Some(path)
                    && a.get("offset") == args.get("offset")
                    && a.get("limit") == args.get("limit")
                {
                    return Some("the same file was read again later in the run".to_string());
                }
            }
            "bash" => {
                if name == "bash" && a.get("command").and_then(Value::as_str).map(normalized_command) == command {
                    return Some("the same command was run again later in the run".to_string());
                }
            }
            _ => {
                if name == tool && a == args {
                    return Some("the same call was made again later in the run".to_string());
                }
            }
        }
    }
    None
}

/// Consecutive batches (first index, count) of at most `max_chars` of item
/// text and `max_items` items; an item larger than `max_chars` goes alone.
pub fn batches(sizes: &[usize], max_chars: usize, max_items: usize) -> Vec<(usize, usize)> {
    let max_items = max_items.clamp(1, MAX_ITEMS);
    let mut out = Vec::new();
    let (mut first, mut count, mut chars) = (0usize, 0usize, 0usize);
    for (i, &size) in sizes.iter().enumerate() {
        if count > 0 && (count >= max_items || chars.saturating_add(size) > max_chars) {
            out.push((first, count));
            (first, count, chars) = (i, 0, 0);
        }
        count += 1;
        chars = chars.saturating_add(size);
    }
    if count > 0 {
        out.push((first, count));
    }
    out
}

const SMALL_SITUATION: &str = "A coding agent has answered the user's question. Below are shorter tool outputs from \
its work, each judged as a whole: an output that is no longer needed is replaced by a one-line note (the agent can \
recall it).";
const SMALL_SITUATION_MID_RUN: &str = "A coding agent is still working on the user's question. Below are shorter \
outputs of its earlier tool calls, each judged as a whole: an output that is no longer needed is replaced by a \
one-line note (the agent can recall it).";
const HISTORY: &str = " earlier_conversation shows the session so far, and the agent will likely continue it.";

/// The small output as sent (clipped) and the characters it counts for batching.
pub fn small_item(o: &SmallOutput) -> SmallItem {
    SmallItem {
        tool: tool_label(&o.output.tool, &o.output.arguments),
        status: o.output.is_error.then(|| "failed".to_string()),
        superseded: o.superseded.clone(),
        output: clip_middle(&o.output.text, SMALL_OUTPUT_MAX),
    }
}

/// Characters an item counts for batching (its label and output).
pub fn small_item_chars(i: &SmallItem) -> usize {
    js_len(&i.tool).saturating_add(js_len(&i.output))
}

/// The key of the item numbered `n` (1-based, across the pass).
pub fn output_key(n: usize) -> String {
    format!("output_{n}")
}

/// One request for a batch of small outputs, keyed `output_N`.
pub fn small_request(run: &Run, items: Vec<(String, SmallItem)>) -> ClassifierContext {
    let earlier_conversation = earlier(&run.history);
    let mut situation = (if run.mid_run { SMALL_SITUATION_MID_RUN } else { SMALL_SITUATION }).to_string();
    if earlier_conversation.is_some() {
        situation.push_str(HISTORY);
    }
    let questions = items
        .iter()
        .map(|(k, _)| {
            (
                k.clone(),
                ClassifierQuestion::Bool {
                    instructions: if run.mid_run {
                        // The original guard's mid-run question for small outputs.
                        format!(
                            "To finish user_question, will the agent still need the output in {k}? An output that a \
                             later call superseded, or that the agent has already acted on and moved past, is not \
                             needed."
                        )
                    } else {
                        format!(
                            "Is {k} still needed for the final answer, for a likely follow-up question, or for the \
                             user's ongoing task? An output that a later call superseded, or a failed call the agent \
                             got past, is usually not needed."
                        )
                    },
                    criteria: BoolCriteria {
                        yes: format!("{k} is still needed"),
                        no: format!("{k} is no longer needed"),
                    },
                },
            )
        })
        .collect();
    ClassifierContext {
        state: State::Small(SmallState {
            run: RunFields::new(situation, earlier_conversation, run),
            outputs: Ordered(items),
        }),
        questions: Ordered(questions),
        chunk_questions: None,
    }
}

/// The stub of a dropped small output.
pub fn small_stub(label: &str, chars: usize, entry_id: &str) -> String {
    format!(
        "{MARK} Omitted the output of {label} ({} chars): judged no longer needed. Full output: {}.",
        short_count(chars),
        recall_call(entry_id)
    )
}

/// What the answer to one item's bool question says: its probability, or
/// why there is none (`error`, `timeout`, `no-answer`).
pub fn item_probability(outcome: &RequestOutcome, key: &str) -> Result<f64, &'static str> {
    match outcome {
        RequestOutcome::Error { .. } => Err("error"),
        RequestOutcome::Timeout => Err("timeout"),
        RequestOutcome::Answered { .. } => match outcome.answer(key) {
            Some(ClassifierAnswer::Bool { probability }) => Ok(probability),
            _ => Err("no-answer"),
        },
    }
}

/// A small output as the pass state carries it.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedSmall {
    pub entry_id: String,
    pub tool: String,
    pub label: String,
    pub chars: usize,
    /// The question key and the request that asks it.
    pub key: String,
    pub request: usize,
    /// Context characters from this entry to the end (the cache rewrite its edit causes).
    pub rewrite_chars: usize,
    /// Requests expected to carry it after a run end (`pass::gate::later_by_index`).
    pub later: usize,
}

impl PlannedSmall {
    pub fn from_value(v: Value) -> PlannedSmall {
        let mut f = Fields::of(v);
        PlannedSmall {
            entry_id: f.string("entryId"),
            tool: f.string("tool"),
            label: f.string("label"),
            chars: f.count("chars"),
            key: f.string("key"),
            request: f.count("request"),
            rewrite_chars: f.count("rewriteChars"),
            later: f.count("later"),
        }
    }
}

/// The decision for one small output: kept (with why) or the stub.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemDecision {
    pub stub: Option<String>,
    pub reason: String,
    pub trace: String,
}

/// P ≥ `smallKeepThreshold` keeps; below it the stub replaces the output,
/// unless the stub would not be shorter. No answer keeps (asked again later).
pub fn decide_small(p: &PlannedSmall, outcome: &RequestOutcome, s: &Settings) -> ItemDecision {
    let probability = match item_probability(outcome, &p.key) {
        Ok(x) => x,
        Err(why) => return ItemDecision { stub: None, reason: why.to_string(), trace: why.to_string() },
    };
    let trace = format!("p{}", crate::classify::trace_p(probability));
    if probability >= s.small_keep_threshold {
        return ItemDecision { stub: None, reason: "needed".to_string(), trace };
    }
    let stub = small_stub(&p.label, p.chars, &p.entry_id);
    if js_len(&stub) >= p.chars {
        return ItemDecision { stub: None, reason: "not-worth".to_string(), trace };
    }
    ItemDecision { stub: Some(stub), reason: "not-needed".to_string(), trace }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::find_run;
    use crate::testing::{call, entry, result, say, user};
    use serde_json::json;

    fn session(outputs: &[(&str, Value, String)]) -> Vec<ContextEntry> {
        let mut e = vec![entry("u", user("why does the build fail? 日本"))];
        for (i, (tool, args, text)) in outputs.iter().enumerate() {
            e.push(entry(&format!("a{i}"), call(&format!("c{i}"), tool, args.clone())));
            e.push(entry(&format!("r{i}"), result(&format!("c{i}"), tool, text)));
        }
        e.push(entry("end", say("fixed")));
        e
    }

    #[test]
    fn small_outputs_in_the_window_with_superseded_ones() {
        let s = Settings::default();
        let entries = session(&[
            ("read", json!({"path": "a.rs"}), "😀".repeat(300)),
            ("bash", json!({"command": "make  test"}), "x".repeat(500)),
            ("edit", json!({"path": "a.rs"}), "y".repeat(500)),
            ("bash", json!({"command": "make test 2>&1"}), "z".repeat(399)),
            ("read", json!({"path": "b.rs"}), "日".repeat(5000)),
        ]);
        let run = find_run(&entries, &s).unwrap();
        let small = small_outputs(&entries, &run, &s);
        let ids: Vec<&str> = small.iter().map(|o| o.output.entry_id.as_str()).collect();
        // 😀 is two UTF-16 units: 600 chars. edit is excluded; 399 is too small; 5,000 is large.
        assert_eq!(ids, ["r0", "r1"]);
        assert_eq!(small[0].superseded.as_deref(), Some("the file was changed later in the run"));
        assert_eq!(small[1].superseded.as_deref(), Some("the same command was run again later in the run"));
        let mut off = s.clone();
        off.small_result_min_chars = 0;
        assert!(small_outputs(&entries, &run, &off).is_empty());
    }

    #[test]
    fn batches_respect_chars_and_items() {
        assert_eq!(batches(&[10, 10, 10], 25, 40), vec![(0, 2), (2, 1)]);
        assert_eq!(batches(&[100, 1], 25, 40), vec![(0, 1), (1, 1)]);
        assert_eq!(batches(&[1; 85], 1000, 40), vec![(0, 40), (40, 40), (80, 5)]);
        assert_eq!(batches(&[1; 3], 1000, 0), vec![(0, 1), (1, 1), (2, 1)]);
        assert!(batches(&[], 10, 10).is_empty());
    }

    #[test]
    fn a_request_names_status_and_superseded() {
        let s = Settings::default();
        let mut entries = session(&[("bash", json!({"command": "npm test"}), "FAIL 日本 😀\n".repeat(40))]);
        if let crate::entry::Message::ToolResult { is_error, .. } = &mut entries[2].messages[0] {
            *is_error = true;
        }
        let run = find_run(&entries, &s).unwrap();
        let small = small_outputs(&entries, &run, &s);
        let mut item = small_item(&small[0]);
        item.superseded = Some("the same command was run again later in the run".into());
        let r = small_request(&run, vec![(output_key(1), item)]);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["state"]["outputs"]["output_1"]["tool"], "bash `npm test`");
        assert_eq!(v["state"]["outputs"]["output_1"]["status"], "failed");
        assert!(v["state"]["outputs"]["output_1"]["superseded"].is_string());
        assert_eq!(v["questions"]["output_1"]["type"], "bool");
        assert_eq!(v["state"]["user_question"], "why does the build fail? 日本");
    }

    #[test]
    fn decisions_keep_without_answers_and_stub_below_the_threshold() {
        let s = Settings::default();
        let p = PlannedSmall {
            entry_id: "r1".into(),
            tool: "bash".into(),
            label: "bash `ls`".into(),
            chars: 1200,
            key: "output_1".into(),
            request: 0,
            rewrite_chars: 0,
            ..PlannedSmall::default()
        };
        let answered = |x: f64| RequestOutcome::Answered {
            answers: json!({"output_1": {"type": "bool", "probability": x}}).into(),
            input_tokens: 0.0,
            cost_usd: 0.0,
        };
        let d = decide_small(&p, &answered(0.1), &s);
        assert_eq!(
            d.stub.as_deref(),
            Some(
                "[context-guard] Omitted the output of bash `ls` (1.2k chars): judged no longer needed. Full output: \
                 recall({\"entryId\":\"r1\"})."
            )
        );
        assert_eq!(d.trace, "p.10");
        assert_eq!(decide_small(&p, &answered(0.45), &s).reason, "needed");
        assert_eq!(decide_small(&p, &RequestOutcome::Timeout, &s).reason, "timeout");
        assert_eq!(decide_small(&p, &answered(f64::NAN), &s).reason, "no-answer");
        let tiny = PlannedSmall { chars: 100, ..p };
        assert_eq!(decide_small(&tiny, &answered(0.0), &s).reason, "not-worth");
    }
}
