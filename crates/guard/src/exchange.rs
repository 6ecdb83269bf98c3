//! Old exchanges (docs/GUARD.md, "Whole items"): a user prompt and every entry
//! up to the next one, judged as one item and omitted whole when unrelated to
//! the current work.
//!
//! For: the exchanges before the run and which of them may be judged, their
//! batched requests, the stub on the prompt with `replacement: null` for every
//! other editable entry, and the run-end break-even that defers omissions
//! whose cache rewrite would not pay off. Not for: the transcript `recall`
//! returns (`recall`) or the savings (`stats`).
//!
//! Omitting calls and their results together keeps every provider request
//! valid (no tool call without its result, no result without its call);
//! entries Pi cannot edit (system messages, `!` shell runs) stay where they are.

use serde::Serialize;
use serde_json::Value;

use crate::cache::{BreakEven, Measured, Outlook, Rule};
use crate::classify::{
    earlier, BoolCriteria, ClassifierContext, ClassifierQuestion, ExchangeItem, ExchangeState, Ordered, RequestOutcome,
    RunFields, State,
};
use crate::entry::{Block, ContextEntry, Message};
use crate::items::item_probability;
use crate::read::Fields;
use crate::render::{one_line, recall_call, tool_label, MARK};
use crate::run::{flatten, is_steering, user_text, Run};
use crate::settings::Settings;
use crate::size::message_chars;
use crate::text::{clip_middle, js_len, short_count};

/// Every exchange stub starts with this (how `stats` finds them).
pub const STUB_PREFIX: &str = "[context-guard] Omitted an earlier exchange";
/// An exchange with less editable content is never judged.
pub const MIN_EXCHANGE_CHARS: usize = 2000;
/// Request limits (docs/GUARD.md, "What is sent to the classifier").
pub const PROMPT_MAX: usize = 600;
pub const REPLY_MAX: usize = 800;
pub const LABELS_MAX: usize = 20;
/// The stub quotes this much of the prompt.
pub const STUB_QUOTE: usize = 120;
/// Break-even: saved characters × requests so far must reach this many times
/// the extra rewrite (the original guard's factor for the context from the
/// first edited entry; writing costs 12.5× reading, so a rewrite of R
/// costs about what reading 11.5 R more does, rounded up for the requests that
/// do not come).
pub const BREAK_EVEN_FACTOR: usize = 16;

/// One exchange before the run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Span {
    pub prompt_index: usize,
    pub prompt_id: String,
    /// The other entries the model sees that Pi can edit, in order.
    pub editable: Vec<usize>,
    /// Model-visible messages of the editable entries, prompt included.
    pub messages: usize,
    /// Their characters (images by pixels).
    pub chars: usize,
    /// Its last assistant message has no tool calls.
    pub completed: bool,
    /// An entry was edited or omitted by someone else.
    pub foreign: bool,
    /// The prompt already shows a stub.
    pub omitted: bool,
    pub prompt: String,
    pub reply: String,
    pub labels: Vec<String>,
}

fn editable(e: &ContextEntry) -> bool {
    match e.entry_type.as_str() {
        "custom_message" => true,
        "message" => matches!(
            e.messages.first().or(e.raw.as_ref()),
            Some(Message::User { .. } | Message::Assistant { .. } | Message::ToolResult { .. })
        ),
        _ => false,
    }
}

fn first_text(m: &Message) -> Option<&str> {
    let blocks = match m {
        Message::User { content: crate::entry::Content::Text(t) }
        | Message::Custom { content: crate::entry::Content::Text(t), .. } => return Some(t),
        Message::User { content: crate::entry::Content::Blocks(b) }
        | Message::Custom { content: crate::entry::Content::Blocks(b), .. } => b,
        Message::Assistant { content, .. } | Message::ToolResult { content, .. } => content,
        _ => return None,
    };
    blocks.iter().find_map(|b| match b {
        Block::Text { text } => Some(text.as_str()),
        _ => None,
    })
}

/// What the model sees of this entry was changed by someone else: an
/// omission (no messages) or an edit whose text is not a guard note.
fn foreign(e: &ContextEntry) -> bool {
    match e.messages.as_slice() {
        [] => matches!(e.entry_type.as_str(), "message" | "custom_message"),
        [m] => e.raw.is_some() && !first_text(m).is_some_and(|t| t.starts_with(MARK)),
        _ => e.raw.is_some(),
    }
}

/// The prompts (user messages that are not steering messages) by entry index.
pub fn prompts(entries: &[ContextEntry]) -> Vec<usize> {
    let flat = flatten(entries);
    let mut out: Vec<usize> = Vec::new();
    for (k, (i, m)) in flat.iter().enumerate() {
        if m.is_user() && !is_steering(&flat, k) && out.last() != Some(i) {
            out.push(*i);
        }
    }
    out
}

/// The exchanges before the entry `before` (the run's prompt), oldest first.
/// A compaction or branch summary ends an exchange: it is never part of one.
pub fn spans(entries: &[ContextEntry], before: usize) -> Vec<Span> {
    spans_from(entries, 0, before)
}

/// [`spans`] of the exchanges whose prompt is at or after `from` (0, or a
/// prompt's index): the prompts are read from there on.
pub fn spans_from(entries: &[ContextEntry], from: usize, before: usize) -> Vec<Span> {
    let recent = prompts(entries.get(from..).unwrap_or(&[]));
    let starts: Vec<usize> = recent.into_iter().map(|p| p + from).filter(|&p| p < before).collect();
    let mut out = Vec::with_capacity(starts.len());
    for (k, &p) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(before).min(entries.len());
        let Some(prompt) = entries.get(p) else { continue };
        let prompt_message = prompt.messages.first();
        let mut span = Span {
            prompt_index: p,
            prompt_id: prompt.id.clone(),
            messages: prompt.messages.len(),
            chars: prompt.messages.iter().map(message_chars).sum(),
            omitted: prompt_message.and_then(first_text).is_some_and(|t| t.starts_with(MARK)),
            foreign: foreign(prompt),
            prompt: prompt_message.map(user_text).unwrap_or_default(),
            ..Span::default()
        };
        let mut last_assistant: Option<&Message> = None;
        for (i, e) in entries.iter().enumerate().take(end).skip(p + 1) {
            if matches!(e.entry_type.as_str(), "compaction" | "branch_summary") {
                break;
            }
            span.foreign |= foreign(e);
            if !editable(e) || e.messages.is_empty() {
                continue;
            }
            span.editable.push(i);
            span.messages += e.messages.len();
            span.chars = span.chars.saturating_add(e.messages.iter().map(message_chars).sum());
            for m in &e.messages {
                if let Message::Assistant { content, .. } = m {
                    last_assistant = Some(m);
                    let text = m.assistant_text();
                    if !text.trim().is_empty() {
                        span.reply = text;
                    }
                    for b in content {
                        if let Block::ToolCall { name, arguments, .. } = b {
                            span.labels.push(tool_label(name, arguments));
                        }
                    }
                }
            }
        }
        span.completed = last_assistant.is_some_and(|m| !m.has_tool_calls());
        out.push(span);
    }
    out
}

/// The stub on an omitted exchange's prompt.
pub fn stub(span: &Span) -> String {
    format!(
        "{STUB_PREFIX} judged unrelated to the current work: \"{}\" ({} message{}, ~{} tokens). Full exchange: {}.",
        one_line(&span.prompt, STUB_QUOTE),
        span.messages,
        if span.messages == 1 { "" } else { "s" },
        short_count(span.chars.div_ceil(4)),
        recall_call(&span.prompt_id)
    )
}

/// The exchanges that may be judged: before the run, not among the last
/// `keepRecentExchanges`, completed, not already omitted, nothing edited or
/// omitted by someone else, ≥ 2,000 editable characters, stub shorter.
pub fn candidates(entries: &[ContextEntry], run: &Run, s: &Settings) -> Vec<Span> {
    candidates_from(entries, 0, run, s)
}

/// [`candidates`] among the exchanges whose prompt is at or after `from` (0,
/// or a prompt's index; see [`spans_from`]).
pub fn candidates_from(entries: &[ContextEntry], from: usize, run: &Run, s: &Settings) -> Vec<Span> {
    if !s.prune_exchanges {
        return Vec::new();
    }
    let all = spans_from(entries, from, run.prompt_index);
    let judged = all.len().saturating_sub(s.keep_recent_exchanges);
    all.into_iter()
        .take(judged)
        .filter(|x| x.completed && !x.omitted && !x.foreign && x.chars >= MIN_EXCHANGE_CHARS)
        .filter(|x| js_len(&stub(x)) < x.chars)
        .collect()
}

const SITUATION: &str = "A coding agent has answered the user's current question. Below are earlier exchanges of \
the same session (the user's prompt, the agent's last reply, the tools it called). An exchange unrelated to the \
current work is replaced by a one-line note (the agent can recall it).";

const SITUATION_MID_RUN: &str = "A coding agent is still working on the user's current question. Below are earlier \
exchanges of the same session (the user's prompt, the agent's last reply, the tools it called). An exchange \
unrelated to the current work is replaced by a one-line note (the agent can recall it).";

pub fn item(span: &Span) -> ExchangeItem {
    let more = span.labels.len().saturating_sub(LABELS_MAX);
    let mut tool_calls: Vec<String> = span.labels.iter().take(LABELS_MAX).cloned().collect();
    if more > 0 {
        tool_calls.push(format!("and {more} more"));
    }
    ExchangeItem {
        user: clip_middle(&span.prompt, PROMPT_MAX),
        assistant: clip_middle(&span.reply, REPLY_MAX),
        tool_calls,
        size: format!("{} messages, {} chars", span.messages, short_count(span.chars)),
    }
}

/// Characters an exchange item counts for batching.
pub fn item_chars(i: &ExchangeItem) -> usize {
    js_len(&i.user).saturating_add(js_len(&i.assistant)).saturating_add(i.tool_calls.iter().map(|t| js_len(t)).sum())
}

pub fn exchange_key(n: usize) -> String {
    format!("exchange_{n}")
}

/// One request for a batch of exchanges, keyed `exchange_N`.
pub fn request(run: &Run, items: Vec<(String, ExchangeItem)>) -> ClassifierContext {
    let questions = items
        .iter()
        .map(|(k, _)| {
            (
                k.clone(),
                ClassifierQuestion::Bool {
                    instructions: format!(
                        "Is {k} still relevant to the current work: the same files, task, decisions or facts?"
                    ),
                    criteria: BoolCriteria { yes: format!("{k} is still relevant"), no: format!("{k} is unrelated") },
                },
            )
        })
        .collect();
    ClassifierContext {
        state: State::Exchange(ExchangeState {
            run: RunFields::new(
                (if run.mid_run { SITUATION_MID_RUN } else { SITUATION }).to_string(),
                earlier(&run.history),
                run,
            ),
            exchanges: Ordered(items),
        }),
        questions: Ordered(questions),
        chunk_questions: None,
    }
}

/// An exchange as the pass state carries it.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedExchange {
    pub prompt_id: String,
    /// The first words of the prompt, for the record.
    pub label: String,
    /// The other editable entries (`replacement: null`).
    pub omit_ids: Vec<String>,
    pub chars: usize,
    pub stub: String,
    pub key: String,
    pub request: usize,
    /// The cache rewrite its omission causes, and where it starts (`cache`).
    pub rewrite_chars: usize,
    pub rewrite_basis: crate::cache::Basis,
}

impl PlannedExchange {
    pub fn from_value(v: Value) -> PlannedExchange {
        let mut f = Fields::of(v);
        PlannedExchange {
            prompt_id: f.string("promptId"),
            label: f.string("label"),
            omit_ids: f.list("omitIds", |v| v.as_str().map(str::to_string).unwrap_or_default()),
            chars: f.count("chars"),
            stub: f.string("stub"),
            key: f.string("key"),
            request: f.count("request"),
            rewrite_chars: f.count("rewriteChars"),
            rewrite_basis: crate::cache::Basis::parse(&f.string("rewriteBasis")).unwrap_or_default(),
        }
    }
}

/// Whether an exchange is unrelated: P < `exchangeOmitThreshold` (with the
/// trace), or why it is kept.
pub fn unrelated(p: &PlannedExchange, outcome: &RequestOutcome, s: &Settings) -> (bool, String, String) {
    match item_probability(outcome, &p.key) {
        Ok(x) => {
            let trace = format!("p{}", crate::classify::trace_p(x));
            if x < s.exchange_omit_threshold {
                (true, "unrelated".to_string(), trace)
            } else {
                (false, "related".to_string(), trace)
            }
        }
        Err(why) => (false, why.to_string(), why.to_string()),
    }
}

/// The run-end break-even (`exchangeBreakEven`), one rule for two kinds: the unrelated old
/// exchanges together (`Rule::Exchanges`: they must also save at least
/// `exchangeMinSavingChars`) and the old images from before the run's prompt
/// together (`Rule::Images`: no minimum, as in the original guard). Their rewrite
/// (`own`, from the earliest of them) beyond what the pass's other edits
/// rewrite anyway (`other_rewrite`) must pay off over the requests expected
/// after the run (`worth`; in tokens, factor [`BREAK_EVEN_FACTOR`]). What they
/// save is known (the judge has answered), so all of it counts. The measure
/// is the provider's (`cache::Rewrite`): on OpenAI Codex any other edit
/// rewrites the whole context, so they ride along at no extra cost. `None`
/// with `exchangeBreakEven` off: no gate, they go.
pub fn run_end_break_even(
    rule: Rule,
    saved: usize,
    own: Measured,
    other_rewrite: usize,
    outlook: Outlook,
    s: &Settings,
) -> Option<BreakEven> {
    if !s.exchange_break_even {
        return None;
    }
    Some(
        BreakEven {
            rule,
            saved_chars: saved,
            factor: BREAK_EVEN_FACTOR,
            rewrite_chars: own.chars.saturating_sub(other_rewrite),
            min_saving_chars: if rule == Rule::Exchanges { s.exchange_min_saving_chars } else { 0 },
            basis: own.basis,
            ..BreakEven::default()
        }
        // What they save is known: all of it counts.
        .weigh(&Outlook { share_permille: 1000, ..outlook }, 0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Content;
    use crate::run::find_run;
    use crate::testing::{call, entry, result, say, user};
    use serde_json::json;

    fn exchange(n: usize, size: usize) -> Vec<ContextEntry> {
        vec![
            entry(&format!("u{n}"), user(&format!("question {n} 日本😀"))),
            entry(&format!("a{n}"), call(&format!("c{n}"), "bash", json!({"command": format!("cat f{n}")}))),
            entry(&format!("r{n}"), result(&format!("c{n}"), "bash", &"x".repeat(size))),
            entry(&format!("s{n}"), say(&format!("answer {n}"))),
        ]
    }

    fn session(sizes: &[usize]) -> Vec<ContextEntry> {
        let mut e: Vec<ContextEntry> = sizes.iter().enumerate().flat_map(|(n, &s)| exchange(n, s)).collect();
        e.push(entry("now", user("current")));
        e.push(entry("done", say("ok")));
        e
    }

    #[test]
    fn the_runs_counted_for_the_estimator_start_at_these_prompts() {
        use crate::run::{flatten, run_lengths, Kind};
        let entries = vec![
            entry("u1", user("q")),
            entry("a1", call("c1", "bash", json!({}))),
            entry("r1", result("c1", "bash", "x")),
            entry("s1", user("steer")),
            entry("a2", say("done")),
            entry("u2", user("next")),
            entry("a3", say("ok")),
        ];
        let kinds: Vec<Kind> = flatten(&entries).iter().map(|(_, m)| Kind::of(m)).collect();
        assert_eq!(run_lengths(&kinds), vec![2, 1]);
        assert_eq!(prompts(&entries), vec![0, 5], "the steering message is not a prompt");
    }

    #[test]
    fn eligibility_follows_the_rules() {
        let s = Settings::default();
        // 0: eligible; 1: too small; 2, 3: the two most recent.
        let entries = session(&[3000, 1000, 3000, 3000]);
        let run = find_run(&entries, &s).unwrap();
        let c = candidates(&entries, &run, &s);
        assert_eq!(c.iter().map(|x| x.prompt_id.as_str()).collect::<Vec<_>>(), ["u0"]);
        assert_eq!(c[0].editable, vec![1, 2, 3]);
        assert_eq!(c[0].messages, 4);
        assert_eq!(c[0].labels, ["bash `cat f0`"]);
        assert_eq!(c[0].reply, "answer 0");
        let st = stub(&c[0]);
        assert!(st.starts_with("[context-guard] Omitted an earlier exchange judged unrelated to the current work: \"question 0 日本😀\" (4 messages, ~"), "{st}");
        assert!(st.ends_with("Full exchange: recall({\"entryId\":\"u0\"})."));
        let mut off = s.clone();
        off.prune_exchanges = false;
        assert!(candidates(&entries, &run, &off).is_empty());
        off = s.clone();
        off.keep_recent_exchanges = 0;
        assert_eq!(candidates(&entries, &run, &off).len(), 3);
    }

    #[test]
    fn unfinished_foreign_and_omitted_exchanges_are_never_judged() {
        let s = Settings { keep_recent_exchanges: 0, ..Settings::default() };
        let mut entries = session(&[3000, 3000, 3000]);
        // 0: cut by a summary after a reply that asks for a tool (unfinished).
        entries[3] = entry("s0", call("c9", "bash", json!({})));
        entries.insert(
            4,
            ContextEntry {
                id: "bs".into(),
                entry_type: "branch_summary".into(),
                messages: vec![Message::BranchSummary { summary: "s".into() }],
                raw: None,
            },
        );
        // 1: another extension omitted its result.
        entries[7].messages.clear();
        // 2: already shows the stub.
        entries[9].raw = Some(entries[9].messages[0].clone());
        entries[9].messages = vec![Message::User { content: Content::Text(format!("{STUB_PREFIX} …")) }];
        let run = find_run(&entries, &s).unwrap();
        let all = spans(&entries, run.prompt_index);
        assert_eq!(all.len(), 3);
        assert!(!all[0].completed);
        assert!(all[1].foreign && all[1].completed);
        assert!(all[2].omitted);
        assert!(candidates(&entries, &run, &s).is_empty());
    }

    #[test]
    fn steering_messages_and_summaries() {
        let s = Settings { keep_recent_exchanges: 0, ..Settings::default() };
        let mut entries = vec![
            entry("u0", user("first")),
            entry("a0", call("c0", "bash", json!({"command": "ls"}))),
            entry("r0", result("c0", "bash", &"y".repeat(2500))),
            entry("st", user("steer 😀")),
            entry("s0", say("done")),
        ];
        entries.push(ContextEntry {
            id: "bs".into(),
            entry_type: "branch_summary".into(),
            messages: vec![Message::BranchSummary { summary: "s".into() }],
            raw: None,
        });
        entries.push(entry("now", user("now")));
        entries.push(entry("end", say("ok")));
        let run = find_run(&entries, &s).unwrap();
        let c = candidates(&entries, &run, &s);
        assert_eq!(c.len(), 1);
        assert_eq!(
            c[0].editable,
            vec![1, 2, 3, 4],
            "the steering message belongs to the exchange; the summary does not"
        );
    }

    #[test]
    fn break_even() {
        let s = Settings::default();
        let own = |chars| Measured { chars, basis: crate::cache::Basis::FirstEdit };
        // In tokens (no prices): the original guard's rule over the requests expected later.
        let weigh = |rule, saved, rewrite, other, later, s: &Settings| {
            let outlook = Outlook { later, requests: later, ..Outlook::default() };
            run_end_break_even(rule, saved, own(rewrite), other, outlook, s).unwrap()
        };
        assert!(weigh(Rule::Exchanges, 100, 5_000, 5_000, 1, &s).paid_off, "no extra rewrite");
        assert!(weigh(Rule::Exchanges, 100, 5_000, 9_000, 1, &s).paid_off, "less than the others rewrite");
        assert!(!weigh(Rule::Exchanges, 7_999, 1, 0, 1_000_000, &s).paid_off, "below the minimum");
        // 10,000 × 15 = 150,000 < 16 × 10,000 = 160,000; × 16 pays.
        let b = weigh(Rule::Exchanges, 10_000, 12_000, 2_000, 15, &s);
        assert_eq!((b.paid_off, b.rewrite_chars, b.min_saving_chars, b.factor), (false, 10_000, 8_000, 16));
        assert!(weigh(Rule::Exchanges, 10_000, 12_000, 2_000, 16, &s).paid_off);
        // Images: no minimum. 1,000 × 16 = 16,000 ≥ 16 × 1,000.
        let b = weigh(Rule::Images, 1_000, 1_000, 0, 16, &s);
        assert_eq!((b.paid_off, b.min_saving_chars), (true, 0));
        assert!(!weigh(Rule::Images, 1_000, 1_000, 0, 15, &s).paid_off);
        let off = Settings { exchange_break_even: false, ..s.clone() };
        assert!(run_end_break_even(Rule::Images, 1, own(10_000), 0, Outlook::default(), &off).is_none());
        // In money (Sonnet 4.5: $0.30 read, $3.75 write per million): 10,000 characters saved over 16 later
        // requests = 2,500 tokens × $0.30/M × 16 = $0.012; a rewrite of 20,000 of which the 10,000 saved
        // are not sent: 2,500 tokens written again × $3.45/M = $0.008625.
        let prices = crate::worth::Prices { input: 3_000_000, cache_read: 300_000, cache_write: 3_750_000 };
        let outlook = Outlook { prices, later: 16, requests: 16, ..Outlook::default() };
        let b = run_end_break_even(Rule::Exchanges, 10_000, own(22_000), 2_000, outlook, &s).unwrap();
        assert_eq!((b.gain_micros, b.cost_micros, b.factor, b.paid_off, b.in_money()), (12_000, 8_625, 0, true, true));
        // Over 11 requests: $0.00825 < $0.008625.
        let b = run_end_break_even(Rule::Exchanges, 10_000, own(22_000), 2_000, Outlook { later: 11, ..outlook }, &s)
            .unwrap();
        assert_eq!((b.gain_micros, b.paid_off), (8_250, false));
    }

    #[test]
    fn a_deferred_omission_goes_in_free_once_the_cache_has_lapsed() {
        let s = Settings::default();
        let own = Measured { chars: 120_000, basis: crate::cache::Basis::Question };
        // Sonnet 4.5 ($0.30 read, $3.75 write per million), 4 requests so far. Warm: 10,000 characters
        // (2,500 tokens) saved × $0.30/M × 4 later requests = $0.003; the 110,000 characters after the
        // question that stay are written again: 27,500 tokens × $3.45/M = $0.094875. Deferred.
        let prices = crate::worth::Prices { input: 3_000_000, cache_read: 300_000, cache_write: 3_750_000 };
        let warm = Outlook { prices, later: 4, requests: 4, ..Outlook::default() };
        let b = run_end_break_even(Rule::Exchanges, 10_000, own, 0, warm, &s).unwrap();
        assert_eq!(
            (b.gain_micros, b.cost_micros, b.rewrite_chars, b.lapsed_ms, b.paid_off),
            (3_000, 94_875, 120_000, 0, false)
        );
        // The next prompt 10 minutes later finds the cache lapsed: the request writes all 120,000 anyway,
        // the omission adds nothing to it. The same rule says yes, with a cost of $0.
        let cold = Outlook { lapsed: Some(600_000), ..warm };
        let b = run_end_break_even(Rule::Exchanges, 10_000, own, 0, cold, &s).unwrap();
        assert_eq!(
            (b.gain_micros, b.cost_micros, b.rewrite_chars, b.lapsed_ms, b.paid_off),
            (3_000, 0, 0, 600_000, true)
        );
        // Even under the minimum saving: the minimum is there to stop a rewrite that is not paid for.
        let b = run_end_break_even(Rule::Images, 2_000, own, 0, cold, &s).unwrap();
        assert!(b.paid_off);
        assert!(run_end_break_even(Rule::Exchanges, 100, own, 0, cold, &s).unwrap().paid_off);
    }

    #[test]
    fn requests_carry_items() {
        let s = Settings { keep_recent_exchanges: 0, ..Settings::default() };
        let entries = session(&[3000]);
        let run = find_run(&entries, &s).unwrap();
        let c = candidates(&entries, &run, &s);
        let r = request(&run, vec![(exchange_key(1), item(&c[0]))]);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["state"]["exchanges"]["exchange_1"]["user"], "question 0 日本😀");
        assert_eq!(v["state"]["exchanges"]["exchange_1"]["tool_calls"][0], "bash `cat f0`");
        assert_eq!(v["questions"]["exchange_1"]["type"], "bool");
    }
}
