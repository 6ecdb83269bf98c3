//! The run and its question, and the tool outputs of the run that may be
//! distilled (docs/GUARD.md, "What it judges").
//!
//! For: reading the projected entries once and answering "where did this run
//! start, what was asked, what was answered, what came before, which outputs
//! are candidates". Not for: sizes of requests (`decide` clips what it sends),
//! chunking, or outputs of earlier runs (those are only touched as whole
//! exchanges and old images).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::entry::{blocks_text, Block, Content, ContextEntry, Message};
use crate::render::MARK;
use crate::secrets::files::secret_file;
use crate::settings::Settings;
use crate::text::{clip_middle, js_len};

/// The placeholder for a user message with only images, so an older
/// question is never reused.
pub const IMAGE_ONLY: &str = "[the user sent only an image]";
/// The prefix of a steering message in the question.
pub const STEERING_PREFIX: &str = "[The user added during the run]";

/// History limits in JavaScript characters (docs/GUARD.md, "What is sent to the classifier").
pub const SUMMARY_MAX: usize = 2000;
pub const EXCHANGE_PROMPT_MAX: usize = 800;
pub const EXCHANGE_REPLY_MAX: usize = 1200;
pub const FIRST_REQUEST_MAX: usize = 1000;

/// The run that just ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Run {
    /// Index in the entries of the prompt that started the run.
    pub prompt_index: usize,
    pub prompt_id: String,
    /// The prompt, then each steering message prefixed with [`STEERING_PREFIX`].
    pub question: String,
    /// The run's last assistant text.
    pub answer: String,
    /// All earlier assistant text of the run, oldest first, separated by blank lines.
    pub notes: String,
    pub history: History,
    /// The run's tool calls by id.
    pub calls: Calls,
    /// Seen at a mid-run checkpoint: the run goes on, so `answer` is
    /// the latest note, not a final answer, and every request asks whether
    /// the agent will still need an item to finish.
    pub mid_run: bool,
}

/// The tool calls of a run, indexed by id: sorted, looked up by binary
/// search (a run has at most hundreds; a sorted list is as fast as a hash map
/// here and much smaller in the wasm).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Calls(Vec<(String, ToolCall)>);

impl Calls {
    fn from_unsorted(mut calls: Vec<(String, ToolCall)>) -> Calls {
        // A repeated id keeps its last call, as a map insert would.
        calls.reverse();
        crate::order::sort_by(&mut calls, |a, b| a.0.cmp(&b.0));
        calls.dedup_by(|a, b| a.0 == b.0);
        Calls(calls)
    }

    pub fn get(&self, id: &str) -> Option<&ToolCall> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(id)).ok().and_then(|i| self.0.get(i)).map(|(_, c)| c)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The calls, by id.
    pub fn iter(&self) -> impl Iterator<Item = &ToolCall> {
        self.0.iter().map(|(_, c)| c)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A tool call of the run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolCall {
    pub name: String,
    pub arguments: Value,
}

/// What came before the run, already clipped. Empty when
/// `historyExchanges` is 0.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct History {
    /// The latest compaction or branch summary.
    pub summary: Option<String>,
    /// The session's first prompt, when it is not among `exchanges`.
    pub first_request: Option<String>,
    /// The last `historyExchanges` exchanges before the run, oldest first.
    pub exchanges: Vec<Exchange>,
}

impl History {
    pub fn is_empty(&self) -> bool {
        self.summary.is_none() && self.first_request.is_none() && self.exchanges.is_empty()
    }
}

/// One earlier exchange: a prompt and the last assistant text after it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Exchange {
    pub user: String,
    pub assistant: String,
}

/// A tool output of the run that passed the candidate rules ([`run_outputs`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Output {
    pub entry_id: String,
    pub entry_index: usize,
    pub tool_call_id: String,
    /// The call's tool name (the result's own name if the call is not in the run).
    pub tool: String,
    /// The call's arguments (`null` if the call is not in the run).
    pub arguments: Value,
    /// The model-visible text: the text blocks joined by a newline.
    pub text: String,
    /// `text` in JavaScript characters.
    pub chars: usize,
    pub is_error: bool,
}

/// The large outputs of a run (≥ `minResultChars`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Large {
    /// Empty when `below_min_run`.
    pub outputs: Vec<Output>,
    /// Their characters together.
    pub total_chars: usize,
    /// They add up to less than `minRunChars`: the pass skips them.
    pub below_min_run: bool,
}

/// Every model-visible message in order, with the index of its entry.
pub(crate) fn flatten(entries: &[ContextEntry]) -> Vec<(usize, &Message)> {
    entries.iter().enumerate().flat_map(|(i, e)| e.messages.iter().map(move |m| (i, m))).collect()
}

/// A steering message: a user message whose preceding message, custom notices
/// aside, is a tool result or an assistant message with tool calls. It
/// was sent while the agent worked, so it continues the run.
pub(crate) fn is_steering(flat: &[(usize, &Message)], at: usize) -> bool {
    steers(flat.get(..at).unwrap_or(&[]).iter().rev().map(|(_, m)| Kind::of(m)))
}

/// A message as a run's bounds read it. Over the boundary (`run_lengths`)
/// one letter each: `u` user, `a` assistant, `t` assistant with tool calls,
/// `r` tool result, `c` custom message, anything else another message
/// (a summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    User,
    Reply,
    Calls,
    ToolResult,
    Custom,
    Other,
}

impl Kind {
    pub fn of(m: &Message) -> Kind {
        match m {
            Message::User { .. } => Kind::User,
            Message::Assistant { .. } if m.has_tool_calls() => Kind::Calls,
            Message::Assistant { .. } => Kind::Reply,
            Message::ToolResult { .. } => Kind::ToolResult,
            Message::Custom { .. } => Kind::Custom,
            _ => Kind::Other,
        }
    }

    pub fn from_byte(b: u8) -> Kind {
        match b {
            b'u' => Kind::User,
            b'a' => Kind::Reply,
            b't' => Kind::Calls,
            b'r' => Kind::ToolResult,
            b'c' => Kind::Custom,
            _ => Kind::Other,
        }
    }
}

/// Whether a user message is a steering message, from the messages before
/// it, nearest first: the first that is not a custom message is a tool result
/// or an assistant message with tool calls.
fn steers(mut before: impl Iterator<Item = Kind>) -> bool {
    matches!(before.find(|k| *k != Kind::Custom), Some(Kind::ToolResult | Kind::Calls))
}

/// The provider requests (assistant messages) of each run, in order: a run
/// starts at a user message that is not a steering message and holds the
/// assistant messages up to the next run; those before the first run are not
/// counted. The one definition of a run for the `median` estimator of later
/// requests, this session's runs and saved sessions' alike (the extension
/// calls it through the wasm's `runLengths`).
pub fn run_lengths(kinds: &[Kind]) -> Vec<usize> {
    let mut runs: Vec<usize> = Vec::new();
    for (i, k) in kinds.iter().enumerate() {
        match k {
            Kind::User if starts_run(kinds, i) => runs.push(0),
            Kind::Reply | Kind::Calls => {
                if let Some(n) = runs.last_mut() {
                    *n += 1;
                }
            }
            _ => {}
        }
    }
    runs
}

/// The turns (assistant messages) of the run whose prompt is entry `prompt_index`, so far.
pub fn run_turns(entries: &[ContextEntry], prompt_index: usize) -> usize {
    entries.iter().skip(prompt_index.saturating_add(1)).map(ContextEntry::replies).fold(0usize, usize::saturating_add)
}

/// Whether the message at `i` starts a run: a user message that is not a
/// steering message.
pub fn starts_run(kinds: &[Kind], i: usize) -> bool {
    kinds.get(i) == Some(&Kind::User) && !steers(kinds.get(..i).unwrap_or(&[]).iter().rev().copied())
}

/// Index in `flat` of the prompt that started the last run.
fn run_start(flat: &[(usize, &Message)]) -> Option<usize> {
    let mut end = flat.len();
    loop {
        let user = flat.get(..end)?.iter().rposition(|(_, m)| m.is_user())?;
        if !is_steering(flat, user) {
            return Some(user);
        }
        end = user;
    }
}

/// A user message as the classifier reads it: its text, or the image-only
/// placeholder.
pub(crate) fn user_text(m: &Message) -> String {
    match m {
        Message::User { content } => content_text(content),
        _ => String::new(),
    }
}

/// Finds the run that ended last, its question, answer, notes and history.
/// `None` when the entries hold no user message.
pub fn find_run(entries: &[ContextEntry], settings: &Settings) -> Option<Run> {
    let flat = flatten(entries);
    let start = run_start(&flat)?;
    let (prompt_index, prompt) = *flat.get(start)?;
    let after = flat.get(start + 1..).unwrap_or(&[]);

    let mut question = user_text(prompt);
    let mut texts: Vec<String> = Vec::new();
    let mut calls = Vec::new();
    for (_, m) in after {
        match m {
            Message::User { .. } => {
                question.push_str("\n\n");
                question.push_str(STEERING_PREFIX);
                question.push(' ');
                question.push_str(&user_text(m));
            }
            Message::Assistant { content, .. } => {
                let text = blocks_text(content);
                if !text.trim().is_empty() {
                    texts.push(text);
                }
                push_calls(content, &mut calls);
            }
            _ => {}
        }
    }
    let answer = texts.pop().unwrap_or_default();
    let notes = crate::text::join(&texts, "\n\n");
    let history = if settings.history_exchanges == 0 {
        History::default()
    } else {
        history(flat.get(..start).unwrap_or(&[]), settings.history_exchanges)
    };
    Some(Run {
        prompt_index,
        prompt_id: entries.get(prompt_index).map(|e| e.id.clone()).unwrap_or_default(),
        question,
        answer,
        notes,
        history,
        calls: Calls::from_unsorted(calls),
        mid_run: false,
    })
}

/// The earlier conversation from the messages before the run (`historyExchanges`).
fn history(before: &[(usize, &Message)], n: usize) -> History {
    let summary = before
        .iter()
        .rev()
        .find_map(|(_, m)| match m {
            Message::CompactionSummary { summary } | Message::BranchSummary { summary } => Some(summary),
            _ => None,
        })
        .filter(|s| !s.trim().is_empty())
        .map(|s| clip_middle(s, SUMMARY_MAX));

    // Every user message starts an exchange (steering messages of earlier runs too).
    let starts: Vec<usize> = before.iter().enumerate().filter(|(_, (_, m))| m.is_user()).map(|(i, _)| i).collect();
    let first_kept = starts.len().saturating_sub(n);
    let mut exchanges = Vec::new();
    for (k, &s) in starts.iter().enumerate().skip(first_kept) {
        let end = starts.get(k + 1).copied().unwrap_or(before.len());
        let user = before.get(s).map(|(_, m)| user_text(m)).unwrap_or_default();
        let assistant = before
            .get(s + 1..end)
            .unwrap_or(&[])
            .iter()
            .rev()
            .map(|(_, m)| m.assistant_text())
            .find(|t| !t.trim().is_empty())
            .unwrap_or_default();
        exchanges.push(Exchange {
            user: clip_middle(&user, EXCHANGE_PROMPT_MAX),
            assistant: clip_middle(&assistant, EXCHANGE_REPLY_MAX),
        });
    }
    let first_request = if first_kept > 0 {
        starts
            .first()
            .and_then(|&s| before.get(s))
            .map(|(_, m)| user_text(m))
            .filter(|t| !t.trim().is_empty())
            .map(|t| clip_middle(&t, FIRST_REQUEST_MAX))
    } else {
        None
    };
    History { summary, first_request, exchanges }
}

/// The tool outputs of the run that pass the candidate rules, whatever
/// their size: the entry projects to exactly one tool result of text blocks
/// only; not an error unless `distillErrors`; the tool is not excluded; the
/// visible text does not start with the marker (already ours); and the visible
/// text equals the raw entry's (another extension's edit is left alone).
pub fn run_outputs(entries: &[ContextEntry], run: &Run, settings: &Settings) -> Vec<Output> {
    let from = run.prompt_index.saturating_add(1);
    outputs_where(entries, &run.calls, settings, &mut |i, _| i >= from)
}

/// The outputs before the run whose edits wait (`ids`, from
/// `memo::deferred_outputs`), under the same rules, their calls read from the
/// whole context (issue 26: a later run end weighs them again).
pub fn waiting_outputs(entries: &[ContextEntry], run: &Run, ids: &[&str], settings: &Settings) -> Vec<Output> {
    if ids.is_empty() {
        return Vec::new();
    }
    let mut calls = Vec::new();
    for m in entries.get(..run.prompt_index).unwrap_or(&[]).iter().flat_map(|e| &e.messages) {
        if let Message::Assistant { content, .. } = m {
            push_calls(content, &mut calls);
        }
    }
    let calls = Calls::from_unsorted(calls);
    let before = run.prompt_index;
    outputs_where(entries, &calls, settings, &mut |i, id| i < before && ids.contains(&id))
}

/// The tool calls of an assistant message's blocks, by id, onto `calls`.
fn push_calls(content: &[Block], calls: &mut Vec<(String, ToolCall)>) {
    for b in content {
        if let Block::ToolCall { id, name, arguments } = b {
            calls.push((id.clone(), ToolCall { name: name.clone(), arguments: arguments.clone() }));
        }
    }
}

/// A tool result's model-visible text (its text blocks joined by a newline)
/// when it holds nothing but text; `None` for any other message.
pub fn output_text(message: &Message) -> Option<String> {
    match message {
        Message::ToolResult { content, .. } if content.iter().all(|b| matches!(b, Block::Text { .. })) => {
            Some(blocks_text(content))
        }
        _ => None,
    }
}

/// The outputs at the entries `at` takes (index, id) that pass the candidate rules.
fn outputs_where(
    entries: &[ContextEntry],
    calls: &Calls,
    settings: &Settings,
    at: &mut dyn FnMut(usize, &str) -> bool,
) -> Vec<Output> {
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if !at(i, &e.id) {
            continue;
        }
        let [Message::ToolResult { tool_call_id, tool_name, content, is_error }] = e.messages.as_slice() else {
            continue;
        };
        if !content.iter().all(|b| matches!(b, Block::Text { .. })) {
            continue;
        }
        if *is_error && !settings.distill_errors {
            continue;
        }
        let call = calls.get(tool_call_id);
        // A file that is a secret is never sent (issue 18); `secret_file_labels` names it.
        if call.is_some_and(|c| secret_file(&c.arguments, &settings.secret_files).is_some()) {
            continue;
        }
        let tool = call.map(|c| c.name.clone()).unwrap_or_else(|| tool_name.clone());
        if settings.exclude_tools.iter().any(|t| *t == tool || t == tool_name) {
            continue;
        }
        let text = blocks_text(content);
        if text.starts_with(MARK) {
            continue;
        }
        if e.raw.as_ref().is_some_and(|raw| output_text(raw).as_deref() != Some(text.as_str())) {
            continue;
        }
        let chars = js_len(&text);
        out.push(Output {
            entry_id: e.id.clone(),
            entry_index: i,
            tool_call_id: tool_call_id.clone(),
            tool,
            arguments: call.map(|c| c.arguments.clone()).unwrap_or(Value::Null),
            text,
            chars,
            is_error: *is_error,
        });
    }
    out
}

/// The large candidates (≥ `minResultChars`), or none when they add up to
/// less than `minRunChars`.
pub fn large_outputs(entries: &[ContextEntry], run: &Run, settings: &Settings) -> Large {
    large_of(run_outputs(entries, run, settings), settings, settings.min_run_chars)
}

/// [`large_outputs`] of candidates already read by [`run_outputs`] (the pass
/// reads them once for large and small outputs: each holds its output's text),
/// with `min_run_chars` for `minRunChars` (a mid-run checkpoint's is 0: its batch gate weighs them).
pub fn large_of(candidates: Vec<Output>, settings: &Settings, min_run_chars: usize) -> Large {
    let outputs: Vec<Output> = candidates.into_iter().filter(|o| o.chars >= settings.min_result_chars).collect();
    let total_chars = outputs.iter().fold(0usize, |a, o| a.saturating_add(o.chars));
    if total_chars < min_run_chars {
        return Large { outputs: Vec::new(), total_chars, below_min_run: true };
    }
    Large { outputs, total_chars, below_min_run: false }
}

/// User content as the classifier reads it: its text, or the image-only
/// placeholder (shared with the exchange transcript of `recall`).
pub fn content_text(content: &Content) -> String {
    let text = content.text();
    if text.trim().is_empty() && content.has_images() {
        IMAGE_ONLY.to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{call, entry, result, say, user};
    use serde_json::json;

    fn image() -> Block {
        Block::Image { data: String::new(), mime_type: "image/png".into() }
    }

    fn settings() -> Settings {
        Settings::default()
    }

    #[test]
    fn runs_are_counted_by_their_prompts_and_a_steering_message_continues_one() {
        let kinds = |s: &str| s.bytes().map(Kind::from_byte).collect::<Vec<_>>();
        // Two runs of 3 and 1 requests; the second user message steers (it follows a tool result).
        assert_eq!(run_lengths(&kinds("utrutraua")), vec![3, 1]);
        // A custom notice between a call and a user message does not end the run either.
        assert_eq!(run_lengths(&kinds("utrtcua")), vec![3]);
        // A user message after a reply starts a run; replies before the first run are not counted.
        assert_eq!(run_lengths(&kinds("aauauua")), vec![1, 0, 1]);
        assert_eq!(run_lengths(&kinds("")), Vec::<usize>::new());
    }

    #[test]
    fn run_starts_at_the_last_prompt_and_reads_question_answer_notes() {
        let entries = vec![
            entry("u1", user("old question")),
            entry("a1", say("old answer")),
            entry("u2", user("where is X?")),
            entry(
                "a2",
                Message::Assistant {
                    content: vec![
                        Block::Text { text: "Let me look.".into() },
                        Block::ToolCall { id: "c1".into(), name: "bash".into(), arguments: json!({"command": "rg X"}) },
                    ],
                    stop_reason: None,
                },
            ),
            entry("r1", result("c1", "bash", "a:1:X")),
            entry("a3", say("X is in a.")),
        ];
        let run = find_run(&entries, &settings()).unwrap();
        assert_eq!(run.prompt_id, "u2");
        assert_eq!(run.prompt_index, 2);
        assert_eq!(run.question, "where is X?");
        assert_eq!(run.answer, "X is in a.");
        assert_eq!(run.notes, "Let me look.");
        assert_eq!(run.calls.get("c1").unwrap().name, "bash");
        assert_eq!(run.calls.len(), 1);
        assert!(run.calls.get("c9").is_none());
        assert_eq!(
            run.history.exchanges,
            vec![Exchange { user: "old question".into(), assistant: "old answer".into() }]
        );
        assert_eq!(run.history.first_request, None);
    }

    #[test]
    fn steering_messages_continue_the_run_and_join_the_question() {
        let custom = Message::Custom { custom_type: "notice".into(), content: Content::Text("n".into()) };
        let entries = vec![
            entry("u1", user("fix the build")),
            entry("a1", call("c1", "bash", json!({"command": "make"}))),
            entry("r1", result("c1", "bash", "error")),
            entry("n1", custom),
            entry("s1", user("also run the tests")),
            entry("a2", call("c2", "bash", json!({"command": "make test"}))),
            entry("r2", result("c2", "bash", "ok")),
            entry("s2", Message::User { content: Content::Blocks(vec![image()]) }),
            entry("a3", say("Done.")),
        ];
        let run = find_run(&entries, &settings()).unwrap();
        assert_eq!(run.prompt_id, "u1");
        assert_eq!(
            run.question,
            "fix the build\n\n[The user added during the run] also run the tests\n\n\
             [The user added during the run] [the user sent only an image]"
        );
        assert_eq!(run.answer, "Done.");
        assert!(run.history.is_empty());
    }

    #[test]
    fn an_image_only_prompt_is_never_an_older_question() {
        let entries = vec![
            entry("u1", user("old")),
            entry("a1", say("old answer")),
            entry("u2", Message::User { content: Content::Blocks(vec![image()]) }),
            entry("a2", say("an image")),
        ];
        let run = find_run(&entries, &settings()).unwrap();
        assert_eq!(run.question, IMAGE_ONLY);
    }

    #[test]
    fn no_user_message_means_no_run() {
        assert!(find_run(&[entry("a", say("hi"))], &settings()).is_none());
        assert!(find_run(&[], &settings()).is_none());
    }

    #[test]
    fn history_has_the_last_exchanges_the_first_request_and_the_summary() {
        let mut entries = vec![
            ContextEntry {
                id: "c".into(),
                entry_type: "compaction".into(),
                messages: vec![Message::CompactionSummary { summary: "S".repeat(3000) }],
                raw: None,
            },
            entry("u0", user("first request")),
            entry("a0", say("first answer")),
        ];
        for i in 1..=4 {
            entries.push(entry(&format!("u{i}"), user(&format!("q{i}"))));
            entries.push(entry(&format!("x{i}"), say("note")));
            entries.push(entry(&format!("a{i}"), say(&"r".repeat(2000))));
        }
        entries.push(entry("now", user("current")));
        entries.push(entry("end", say("answer")));
        let run = find_run(&entries, &settings()).unwrap();
        let h = &run.history;
        assert_eq!(js_len(h.summary.as_deref().unwrap()), SUMMARY_MAX);
        assert_eq!(h.first_request.as_deref(), Some("first request"));
        let users: Vec<&str> = h.exchanges.iter().map(|e| e.user.as_str()).collect();
        assert_eq!(users, ["q2", "q3", "q4"]);
        assert_eq!(js_len(&h.exchanges[0].assistant), EXCHANGE_REPLY_MAX);
        assert!(h.exchanges[0].assistant.contains("[…]"));

        let off = Settings { history_exchanges: 0, ..settings() };
        assert!(find_run(&entries, &off).unwrap().history.is_empty());
        let all = Settings { history_exchanges: 10, ..settings() };
        let h = find_run(&entries, &all).unwrap().history;
        assert_eq!(h.exchanges.len(), 5);
        assert_eq!(h.first_request, None, "the first request is already among the exchanges");
    }

    fn candidate_entries(text: &str) -> Vec<ContextEntry> {
        vec![
            entry("u", user("q")),
            entry("a1", call("c1", "bash", json!({"command": "rg x"}))),
            entry("r1", result("c1", "bash", text)),
            entry("a2", say("answer")),
        ]
    }

    #[test]
    fn candidates_follow_the_rules() {
        let big = "x\n".repeat(5000);
        let s = settings();
        let entries = candidate_entries(&big);
        let run = find_run(&entries, &s).unwrap();
        let large = large_outputs(&entries, &run, &s);
        assert_eq!(large.outputs.len(), 1);
        assert_eq!(large.outputs[0].tool, "bash");
        assert_eq!(large.outputs[0].arguments, json!({"command": "rg x"}));
        assert_eq!(large.outputs[0].chars, 10_000);

        // Below minRunChars in total: nothing.
        let small = "x".repeat(5000);
        let entries = candidate_entries(&small);
        let large = large_outputs(&entries, &run, &s);
        assert!(large.below_min_run && large.outputs.is_empty());
        assert_eq!(large.total_chars, 5000);

        // Below minResultChars: not large.
        let entries = candidate_entries("short");
        assert!(large_outputs(&entries, &run, &Settings { min_run_chars: 0, ..s.clone() }).outputs.is_empty());

        // Already ours.
        let entries = candidate_entries(&format!("{MARK} Distilled…{big}"));
        assert!(run_outputs(&entries, &run, &s).is_empty());

        // Excluded tool.
        let entries = candidate_entries(&big);
        let ex = Settings { exclude_tools: vec!["bash".into()], ..s.clone() };
        assert!(run_outputs(&entries, &run, &ex).is_empty());

        // Error results only with distillErrors.
        let mut entries = candidate_entries(&big);
        if let Message::ToolResult { is_error, .. } = &mut entries[2].messages[0] {
            *is_error = true;
        }
        assert_eq!(run_outputs(&entries, &run, &s).len(), 1);
        assert!(run_outputs(&entries, &run, &Settings { distill_errors: false, ..s.clone() }).is_empty());

        // Images.
        let mut entries = candidate_entries(&big);
        if let Message::ToolResult { content, .. } = &mut entries[2].messages[0] {
            content.push(image());
        }
        assert!(run_outputs(&entries, &run, &s).is_empty());

        // Edited by another extension (raw differs) vs. raw equal.
        let mut entries = candidate_entries(&big);
        entries[2].raw = Some(result("c1", "bash", "other"));
        assert!(run_outputs(&entries, &run, &s).is_empty());
        entries[2].raw = Some(result("c1", "bash", &big));
        assert_eq!(run_outputs(&entries, &run, &s).len(), 1);

        // Omitted (no messages) or two messages: not exactly one tool result.
        let mut entries = candidate_entries(&big);
        entries[2].messages.clear();
        assert!(run_outputs(&entries, &run, &s).is_empty());
        let mut entries = candidate_entries(&big);
        let extra = entries[2].messages[0].clone();
        entries[2].messages.push(extra);
        assert!(run_outputs(&entries, &run, &s).is_empty());
    }

    #[test]
    fn outputs_before_the_run_are_never_candidates() {
        let big = "y\n".repeat(5000);
        let entries = vec![
            entry("u0", user("earlier")),
            entry("a0", call("c0", "bash", json!({"command": "cat big"}))),
            entry("r0", result("c0", "bash", &big)),
            entry("a1", say("earlier answer")),
            entry("u", user("now")),
            entry("a2", say("answer")),
        ];
        let run = find_run(&entries, &settings()).unwrap();
        assert!(run_outputs(&entries, &run, &settings()).is_empty());
    }
}
