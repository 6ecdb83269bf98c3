//! What the classifier is asked about a large output, and what its answers
//! mean (guard.md §3 "One classifier request per segment", "Interpretation per
//! segment", "Per result").
//!
//! For: the request of one segment (state and questions, in Pi's
//! `ClassifierContext` shape), the keep set of one answered segment, and the
//! decision for one output from its segments. Not for: sending requests or
//! timing them (the extension), cutting the output (`chunk`) or writing the
//! replacement (`render`).
//!
//! The request's types (Pi's classifier types, the states, the outcome) are
//! in `classify`. Answers are read defensively: a missing key, a number that is
//! not finite or not within 0–1, or a choice that was not offered counts as no
//! answer, and a segment without every answer keeps all its chunks.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::guard::chunk::{Chunk, Segment};
use crate::guard::classify::{
    earlier, trace_p, BoolCriteria, ClassifierAnswer, ClassifierContext, ClassifierQuestion, LargeState, Ordered,
    RequestOutcome, RunFields, State, ARGUMENTS_MAX,
};
use crate::guard::render::{render, Distill, Numbering, Rendered, Verbatim};
use crate::guard::settings::Settings;
use crate::guard::span::Run;
use crate::text::{clip_middle, js_len};

const SITUATION: &str = "A coding agent has answered the user's question. Below is one tool output from its work, \
split into numbered chunks. Only the chunks that are kept stay visible to the agent; the others are replaced by a \
short note.";
const SITUATION_HISTORY: &str =
    " earlier_conversation shows the session so far, and the agent will likely continue it.";
const TOOL_FAILED: &str = "The call failed. Its details are usually no longer needed once the final answer shows the \
agent got past it.";

const KEEP_WHOLE: &str =
    "Is all of this tool output still needed for the final answer or for a likely follow-up question?";
const KEEP_WHOLE_HISTORY: &str = "Is all of this tool output still needed for the final answer, for a likely \
follow-up question, or for the user's ongoing task in earlier_conversation?";
const FOCUS: &str = "Which part of this tool output does the final answer draw on? whole = most of the output is \
needed; none = nothing in it is needed; chunk_N = a few chunks are needed, chunk_N is the most important.";

/// The chunks of one segment, with their numbers across the whole output.
#[derive(Debug, Clone, Copy)]
pub struct RequestInput<'a> {
    pub run: &'a Run,
    pub tool: &'a str,
    pub arguments: &'a Value,
    pub is_error: bool,
    /// Lines of the whole output.
    pub lines: usize,
    /// This segment is part `part` (1-based) of `parts` sent for the output.
    pub part: usize,
    pub parts: usize,
    /// 1-based number of the segment's first chunk.
    pub first_number: usize,
    pub chunk_texts: &'a [&'a str],
}

/// The name of the chunk numbered `n` (1-based, across the output).
pub fn chunk_key(n: usize) -> String {
    format!("chunk_{n}")
}

/// The classifier request for one segment of a large output (§3).
pub fn large_request(input: &RequestInput) -> ClassifierContext {
    let earlier_conversation = earlier(&input.run.history);
    let with_history = earlier_conversation.is_some();
    let mut situation = SITUATION.to_string();
    if with_history {
        situation.push_str(SITUATION_HISTORY);
    }
    let arguments = match input.arguments {
        Value::Null => "{}".to_string(),
        a => serde_json::to_string(a).unwrap_or_default(),
    };
    let lines = if input.lines == 1 { "1 line".to_string() } else { format!("{} lines", input.lines) };
    let output_size = if input.parts > 1 { format!("{lines}, part {} of {}", input.part, input.parts) } else { lines };
    let keys: Vec<String> =
        (0..input.chunk_texts.len()).map(|i| chunk_key(input.first_number.saturating_add(i))).collect();
    let chunks = Ordered(keys.iter().cloned().zip(input.chunk_texts.iter().map(|t| t.to_string())).collect());
    let state = LargeState {
        run: RunFields::new(situation, earlier_conversation, input.run),
        tool: input.tool.to_string(),
        tool_arguments: clip_middle(&arguments, ARGUMENTS_MAX),
        tool_status: input.is_error.then(|| TOOL_FAILED.to_string()),
        output_size,
        chunks,
    };

    let mut questions = Vec::with_capacity(keys.len() + 2);
    questions.push((
        "keep_whole".to_string(),
        ClassifierQuestion::Bool {
            instructions: (if with_history { KEEP_WHOLE_HISTORY } else { KEEP_WHOLE }).to_string(),
            criteria: BoolCriteria {
                yes: "All of the output is still needed".to_string(),
                no: "Only some chunks, or none, are needed".to_string(),
            },
        },
    ));
    let mut options = vec![
        ("whole".to_string(), "Most of the output is needed".to_string()),
        ("none".to_string(), "Nothing in the output is needed".to_string()),
    ];
    options.extend(keys.iter().map(|k| (k.clone(), format!("A few chunks are needed; {k} is the most important"))));
    questions.push((
        "focus".to_string(),
        ClassifierQuestion::Choice { instructions: FOCUS.to_string(), criteria: Ordered(options) },
    ));
    for k in &keys {
        let mut instructions =
            format!("Does {k} hold lines the final answer relies on, or that a likely follow-up question would need");
        if with_history {
            instructions.push_str(
                ", or that the user's ongoing task in earlier_conversation will need, even if the current question \
                 is about something else",
            );
        }
        instructions.push('?');
        questions.push((
            k.clone(),
            ClassifierQuestion::Bool {
                instructions,
                criteria: BoolCriteria { yes: format!("{k} is needed"), no: format!("{k} is not needed") },
            },
        ));
    }
    ClassifierContext { state: State::Large(state), questions: Ordered(questions) }
}

// ---------------------------------------------------------------------------
// Interpretation

/// Why chunks were kept or removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// The request failed or did not stop normally: keep all.
    Error,
    /// No answer within `timeoutMs`: keep all.
    Timeout,
    /// An answer is missing or malformed: keep all.
    NoAnswer,
    /// P(keep_whole) ≥ `keepWholeThreshold`: keep all.
    WholeNeeded,
    /// focus = whole with P ≥ `focusWholeThreshold`: keep all.
    WholeChosen,
    /// No chunk passes and focus is a weak whole: keep all.
    WeakWhole,
    /// No chunk passes, focus a weak none, and no chunk probability to fall back on: keep all.
    WeakNone,
    /// focus = none with P ≥ `noneThreshold` and no chunk passes: remove all.
    NoneNeeded,
    /// The chunks that passed `chunkKeepThreshold`, plus the focus chunk.
    Chunks,
    /// No chunk passed: the chunk with the highest focus probability.
    TopFocus,
    /// A chunk larger than `maxSegmentChars`: never sent, kept.
    Oversize,
    /// The result's edit would keep more than `maxKeepRatio`, or not be shorter.
    NotWorth,
    /// The plan that came back does not fit its text: keep the output.
    BadPlan,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Error => "error",
            Reason::Timeout => "timeout",
            Reason::NoAnswer => "no-answer",
            Reason::WholeNeeded => "whole-needed",
            Reason::WholeChosen => "whole-chosen",
            Reason::WeakWhole => "weak-whole",
            Reason::WeakNone => "weak-none",
            Reason::NoneNeeded => "none-needed",
            Reason::Chunks => "chunks",
            Reason::TopFocus => "top-focus",
            Reason::Oversize => "oversize",
            Reason::NotWorth => "not-worth",
            Reason::BadPlan => "bad-plan",
        }
    }
}

/// The keep set of one segment and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// One flag per chunk of the segment.
    pub keep: Vec<bool>,
    pub reason: Reason,
    /// The jev trace, such as `kw.15 focus=chunk_4:.52 keep 9/29`.
    pub trace: String,
}

impl Verdict {
    /// Keep all `count` chunks (a failure, an oversize chunk, a strong whole).
    pub fn all(count: usize, reason: Reason, trace: String) -> Verdict {
        Verdict { keep: vec![true; count], reason, trace }
    }
}

/// The verdict for a segment of `count` chunks whose first is numbered
/// `first_number`, in the order of §3: error → keep all; `keep_whole` or
/// `focus` missing → keep all (`no-answer`); P(keep_whole) ≥ 0.7 → keep all
/// (`whole-needed`); focus = whole with P ≥ 0.6 → keep all (`whole-chosen`);
/// keep set = chunks with P ≥ 0.6 plus the focus chunk; focus = none with
/// P ≥ 0.5 and an empty keep set → remove all (`none-needed`); empty and
/// focus a weak whole → keep all; still empty → the chunk with the highest
/// focus probability. (Thresholds are the settings'.)
pub fn interpret(outcome: &RequestOutcome, first_number: usize, count: usize, s: &Settings) -> Verdict {
    match outcome {
        RequestOutcome::Error { .. } => return Verdict::all(count, Reason::Error, "error".to_string()),
        RequestOutcome::Timeout => return Verdict::all(count, Reason::Timeout, "timeout".to_string()),
        RequestOutcome::Answered { .. } => {}
    }
    let keys: Vec<String> = (0..count).map(|i| chunk_key(first_number.saturating_add(i))).collect();
    let no_answer = |what: &str| Verdict::all(count, Reason::NoAnswer, format!("no-answer ({what})"));

    let Some(ClassifierAnswer::Bool { probability: kw }) = outcome.answer("keep_whole") else {
        return no_answer("keep_whole");
    };
    let Some(ClassifierAnswer::Choice { choice, probabilities, confidence }) = outcome.answer("focus") else {
        return no_answer("focus");
    };
    if choice != "whole" && choice != "none" && !keys.contains(&choice) {
        return no_answer("focus");
    }
    let p_focus = probabilities.get(&choice).copied().unwrap_or(confidence);
    let mut chunk_p = Vec::with_capacity(count);
    for k in &keys {
        match outcome.answer(k) {
            Some(ClassifierAnswer::Bool { probability }) => chunk_p.push(probability),
            _ => return no_answer(k),
        }
    }
    let head = format!("kw{} focus={choice}:{}", trace_p(kw), trace_p(p_focus));
    let done = |keep: Vec<bool>, reason: Reason| {
        let kept = keep.iter().filter(|k| **k).count();
        Verdict { trace: format!("{head} keep {kept}/{count}"), keep, reason }
    };

    if kw >= s.keep_whole_threshold {
        return done(vec![true; count], Reason::WholeNeeded);
    }
    if choice == "whole" && p_focus >= s.focus_whole_threshold {
        return done(vec![true; count], Reason::WholeChosen);
    }
    let mut keep: Vec<bool> = chunk_p.iter().map(|p| *p >= s.chunk_keep_threshold).collect();
    if let Some(i) = keys.iter().position(|k| *k == choice) {
        if let Some(slot) = keep.get_mut(i) {
            *slot = true;
        }
    }
    if keep.iter().any(|k| *k) {
        return done(keep, Reason::Chunks);
    }
    if choice == "none" && p_focus >= s.none_threshold {
        return done(keep, Reason::NoneNeeded);
    }
    if choice == "whole" {
        return done(vec![true; count], Reason::WeakWhole);
    }
    let top = keys.iter().enumerate().filter_map(|(i, k)| probabilities.get(k).map(|p| (i, *p))).fold(
        None,
        |best: Option<(usize, f64)>, (i, p)| match best {
            Some((_, bp)) if bp >= p => best,
            _ => Some((i, p)),
        },
    );
    match top {
        Some((i, _)) => {
            if let Some(slot) = keep.get_mut(i) {
                *slot = true;
            }
            done(keep, Reason::TopFocus)
        }
        None => done(vec![true; count], Reason::WeakNone),
    }
}

// ---------------------------------------------------------------------------
// Per result

/// What happens to one output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Kept,
    Distilled,
    Removed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Kept => "kept",
            Outcome::Distilled => "distilled",
            Outcome::Removed => "removed",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        [Outcome::Kept, Outcome::Distilled, Outcome::Removed].into_iter().find(|o| o.as_str() == s)
    }
}

/// One output with its chunks and the verdict of each segment.
#[derive(Debug, Clone, Copy)]
pub struct ResultInput<'a> {
    pub text: &'a str,
    pub chunks: &'a [Chunk],
    pub grep: bool,
    /// Each segment with its verdict (oversize segments included).
    pub segments: &'a [(Segment, Verdict)],
    /// The run's final answer (for `keepCitedFiles`).
    pub answer: &'a str,
    pub label: &'a str,
    pub entry_id: &'a str,
    pub numbering: Numbering,
    pub lines: usize,
    pub chars: usize,
}

/// The decision for one output.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub outcome: Outcome,
    /// Distinct segment reasons in order, joined by `,`; or `not-worth`.
    pub reason: String,
    /// The replacement text when the outcome is an edit.
    pub replacement: Option<String>,
    /// Where the kept chunks are in it (see `render::render`).
    pub verbatim: Vec<Verbatim>,
    pub after_chars: usize,
    /// Segment traces joined by ` | `.
    pub trace: String,
    /// One flag per chunk.
    pub keep: Vec<bool>,
}

/// The per-result rule of §3: the union of the segments' keep sets; all
/// kept → no edit; `keepCitedFiles` adds grep chunks of files the answer
/// names; more than `maxKeepRatio` kept, or a replacement not shorter than
/// the original → no edit (`not-worth`); else `distilled`, or `removed` when
/// nothing is kept.
pub fn decide_result(r: &ResultInput, s: &Settings) -> Decision {
    let mut keep = vec![true; r.chunks.len()];
    let mut reasons: Vec<Reason> = Vec::new();
    let mut traces: Vec<&str> = Vec::new();
    for (seg, verdict) in r.segments {
        for (i, slot) in keep.iter_mut().enumerate().skip(seg.first).take(seg.count) {
            *slot = verdict.keep.get(i - seg.first).copied().unwrap_or(true);
        }
        if !reasons.contains(&verdict.reason) {
            reasons.push(verdict.reason);
        }
        traces.push(&verdict.trace);
    }
    let reason: Vec<&str> = reasons.iter().map(|r| r.as_str()).collect();
    let reason = reason.join(",");
    let trace = traces.join(" | ");
    let kept = |reason: String, keep: Vec<bool>| Decision {
        outcome: Outcome::Kept,
        reason,
        replacement: None,
        verbatim: Vec::new(),
        after_chars: r.chars,
        trace: trace.clone(),
        keep,
    };

    if keep.iter().all(|k| *k) {
        return kept(reason, keep);
    }
    if s.keep_cited_files && r.grep && !r.answer.is_empty() {
        let cited = Cited::new(r.answer);
        for (c, slot) in r.chunks.iter().zip(keep.iter_mut()) {
            if !*slot && c.files.iter().any(|f| cited.names(f)) {
                *slot = true;
            }
        }
        if keep.iter().all(|k| *k) {
            return kept(reason, keep);
        }
    }
    let kept_chars: usize = r.chunks.iter().zip(&keep).filter(|(_, k)| **k).map(|(c, _)| c.chars).sum();
    if kept_chars as f64 > s.max_keep_ratio * r.chars as f64 {
        return kept(Reason::NotWorth.as_str().to_string(), keep);
    }
    let distill = Distill {
        text: r.text,
        chunks: r.chunks,
        keep: &keep,
        label: r.label,
        entry_id: r.entry_id,
        numbering: r.numbering,
        lines: r.lines,
        chars: r.chars,
    };
    let Some(Rendered { text, verbatim }) = render(&distill) else {
        return kept(Reason::BadPlan.as_str().to_string(), keep);
    };
    let after = js_len(&text);
    if after >= r.chars {
        return kept(Reason::NotWorth.as_str().to_string(), keep);
    }
    let outcome = if keep.iter().any(|k| *k) { Outcome::Distilled } else { Outcome::Removed };
    Decision { outcome, reason, replacement: Some(text), verbatim, after_chars: after, trace, keep }
}

/// The file names an answer mentions (for `keepCitedFiles`): path-like words,
/// without trailing punctuation or `:line` suffixes. A file is cited when its
/// path equals a mentioned one, one ends with the other after a `/`
/// (`src/a.ts` and `/repo/src/a.ts`), or a bare file name equals its last part.
/// Built once per answer, then each file is a few set lookups.
pub struct Cited {
    /// Mentioned paths, sorted.
    paths: Vec<String>,
    /// Every `/`-suffix of every mentioned path, sorted.
    suffixes: Vec<String>,
}

fn sorted_has(list: &[String], s: &str) -> bool {
    list.binary_search_by(|x| x.as_str().cmp(s)).is_ok()
}

impl Cited {
    pub fn new(answer: &str) -> Cited {
        let mut paths = Vec::new();
        let mut suffixes = Vec::new();
        let separators = |c: char| c.is_whitespace() || "`\"'()[]{}<>,;|*".contains(c);
        for word in answer.split(separators) {
            let word = strip_location(word.trim_end_matches(['.', ':', '!', '?']));
            let word = word.strip_prefix("./").unwrap_or(word);
            if word.is_empty() || !(word.contains('.') || word.contains('/')) {
                continue;
            }
            let mut rest = word;
            while let Some((_, tail)) = rest.split_once('/') {
                if !tail.is_empty() {
                    suffixes.push(tail.to_string());
                }
                rest = tail;
            }
            suffixes.push(word.to_string());
            paths.push(word.to_string());
        }
        paths.sort_unstable();
        suffixes.sort_unstable();
        Cited { paths, suffixes }
    }

    pub fn names(&self, file: &str) -> bool {
        let file = file.strip_prefix("./").unwrap_or(file);
        if sorted_has(&self.suffixes, file) {
            return true;
        }
        let mut rest = file;
        loop {
            if sorted_has(&self.paths, rest) {
                return true;
            }
            match rest.split_once('/') {
                Some((_, tail)) => rest = tail,
                None => return false,
            }
        }
    }
}

/// `a.ts:12`, `a.ts:12:3` and `a.ts#L12` without their location.
fn strip_location(word: &str) -> &str {
    // The last `#L` (by bytes: a two-byte pattern needs no string searcher).
    let bytes = word.as_bytes();
    let mark = (0..bytes.len().saturating_sub(1)).rev().find(|&i| bytes.get(i..i + 2) == Some(b"#L"));
    let word = match mark.and_then(|i| Some((word.get(..i)?, word.get(i + 2..)?))) {
        Some((head, tail))
            if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit() || b == b'-' || b == b'L') =>
        {
            head
        }
        _ => word,
    };
    let mut w = word;
    for _ in 0..2 {
        match w.rsplit_once(':') {
            Some((head, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => w = head,
            _ => break,
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::chunk::chunk;
    use crate::guard::classify::QUESTION_MAX;
    use crate::guard::span::Exchange;
    use serde_json::json;

    fn answered(answers: Value) -> RequestOutcome {
        RequestOutcome::Answered { answers, input_tokens: 100.0, cost_usd: 0.0001 }
    }
    fn b(p: f64) -> Value {
        json!({ "type": "bool", "probability": p })
    }
    fn focus(choice: &str, p: f64, extra: Value) -> Value {
        let mut probs = extra.as_object().cloned().unwrap_or_default();
        probs.insert(choice.to_string(), json!(p));
        json!({ "type": "choice", "choice": choice, "probabilities": probs, "confidence": p })
    }
    /// Answers for a segment of chunks 1..=n with the given chunk probabilities.
    fn answers(kw: f64, f: Value, chunks: &[f64]) -> RequestOutcome {
        let mut m = serde_json::Map::new();
        m.insert("keep_whole".into(), b(kw));
        m.insert("focus".into(), f);
        for (i, p) in chunks.iter().enumerate() {
            m.insert(format!("chunk_{}", i + 1), b(*p));
        }
        answered(Value::Object(m))
    }
    fn s() -> Settings {
        Settings::default()
    }
    fn keep(v: &Verdict) -> Vec<usize> {
        v.keep.iter().enumerate().filter(|(_, k)| **k).map(|(i, _)| i + 1).collect()
    }

    #[test]
    fn the_interpretation_order_of_the_guard() {
        let n = 4;
        // Failures keep all.
        assert_eq!(interpret(&RequestOutcome::Timeout, 1, n, &s()).reason, Reason::Timeout);
        assert_eq!(interpret(&RequestOutcome::Error { message: "x".into() }, 1, n, &s()).reason, Reason::Error);
        // keep_whole wins over everything.
        let v = interpret(&answers(0.7, focus("none", 0.9, json!({})), &[0.0; 4]), 1, n, &s());
        assert_eq!((v.reason, keep(&v)), (Reason::WholeNeeded, vec![1, 2, 3, 4]));
        // A strong whole.
        let v = interpret(&answers(0.2, focus("whole", 0.6, json!({})), &[0.0; 4]), 1, n, &s());
        assert_eq!(v.reason, Reason::WholeChosen);
        // Chunks over the threshold plus the focus chunk, whatever its P.
        let v = interpret(&answers(0.15, focus("chunk_4", 0.52, json!({})), &[0.9, 0.59, 0.6, 0.1]), 1, n, &s());
        assert_eq!((v.reason, keep(&v)), (Reason::Chunks, vec![1, 3, 4]));
        assert_eq!(v.trace, "kw.15 focus=chunk_4:.52 keep 3/4");
        // A weak whole with chunks passing keeps the chunks.
        let v = interpret(&answers(0.1, focus("whole", 0.5, json!({})), &[0.0, 0.8, 0.0, 0.0]), 1, n, &s());
        assert_eq!((v.reason, keep(&v)), (Reason::Chunks, vec![2]));
        // none with P ≥ 0.5 and no chunk: remove all.
        let v = interpret(&answers(0.1, focus("none", 0.5, json!({})), &[0.1; 4]), 1, n, &s());
        assert_eq!((v.reason, keep(&v)), (Reason::NoneNeeded, vec![]));
        // A chunk over the threshold beats none.
        let v = interpret(&answers(0.1, focus("none", 0.9, json!({})), &[0.1, 0.1, 0.7, 0.1]), 1, n, &s());
        assert_eq!((v.reason, keep(&v)), (Reason::Chunks, vec![3]));
        // A weak whole and nothing passing: keep all.
        let v = interpret(&answers(0.1, focus("whole", 0.4, json!({})), &[0.1; 4]), 1, n, &s());
        assert_eq!((v.reason, keep(&v).len()), (Reason::WeakWhole, 4));
        // A weak none: the chunk with the highest focus probability.
        let v = interpret(
            &answers(
                0.1,
                focus("none", 0.3, json!({"whole": 0.2, "chunk_1": 0.1, "chunk_2": 0.25, "chunk_3": 0.15})),
                &[0.1; 4],
            ),
            1,
            n,
            &s(),
        );
        assert_eq!((v.reason, keep(&v)), (Reason::TopFocus, vec![2]));
        // …and with no chunk probability to go on, keep all.
        let v = interpret(&answers(0.1, focus("none", 0.3, json!({})), &[0.1; 4]), 1, n, &s());
        assert_eq!((v.reason, keep(&v).len()), (Reason::WeakNone, 4));
    }

    #[test]
    fn thresholds_come_from_the_settings() {
        let strict = Settings { keep_whole_threshold: 0.95, chunk_keep_threshold: 0.3, ..s() };
        let v = interpret(&answers(0.9, focus("chunk_1", 0.5, json!({})), &[0.1, 0.35]), 1, 2, &strict);
        assert_eq!((v.reason, keep(&v)), (Reason::Chunks, vec![1, 2]));
    }

    #[test]
    fn chunk_numbers_run_across_the_output() {
        let mut m = serde_json::Map::new();
        m.insert("keep_whole".into(), b(0.0));
        m.insert("focus".into(), focus("chunk_42", 0.8, json!({})));
        m.insert("chunk_41".into(), b(0.0));
        m.insert("chunk_42".into(), b(0.0));
        let v = interpret(&answered(Value::Object(m)), 41, 2, &s());
        assert_eq!(v.keep, [false, true]);
    }

    #[test]
    fn malformed_answers_keep_everything() {
        let bad = [
            json!({}),
            json!({ "keep_whole": b(0.1) }),
            json!({ "keep_whole": { "probability": "0.1" }, "focus": focus("none", 0.9, json!({})), "chunk_1": b(0.1) }),
            json!({ "keep_whole": { "probability": 1.5 }, "focus": focus("none", 0.9, json!({})), "chunk_1": b(0.1) }),
            json!({ "keep_whole": { "probability": null }, "focus": focus("none", 0.9, json!({})), "chunk_1": b(0.1) }),
            json!({ "keep_whole": b(0.1), "focus": focus("chunk_9", 0.9, json!({})), "chunk_1": b(0.1) }),
            json!({ "keep_whole": b(0.1), "focus": focus("banana", 0.9, json!({})), "chunk_1": b(0.1) }),
            json!({ "keep_whole": b(0.1), "focus": { "choice": "none", "probabilities": {"none": -0.1} }, "chunk_1": b(0.1) }),
            json!({ "keep_whole": b(0.1), "focus": focus("none", 0.9, json!({})) }),
            json!({ "keep_whole": b(0.1), "focus": focus("none", 0.9, json!({})), "chunk_1": "yes" }),
            json!("not an object"),
            json!(null),
        ];
        for a in bad {
            let v = interpret(&answered(a.clone()), 1, 1, &s());
            assert_eq!((v.reason, v.keep.clone()), (Reason::NoAnswer, vec![true]), "{a}");
        }
        // A choice without `type` and without confidence still reads.
        let a = json!({ "keep_whole": {"probability": 0.0}, "focus": {"choice": "none", "probabilities": {"none": 0.8}},
                        "chunk_1": {"probability": 0.0} });
        assert_eq!(interpret(&answered(a), 1, 1, &s()).reason, Reason::NoneNeeded);
    }

    #[test]
    fn request_outcomes_read_from_the_runner() {
        let read = |v: Value| serde_json::from_value::<RequestOutcome>(v).unwrap();
        assert_eq!(
            read(json!({"status": "answered", "answers": {"a": 1}, "inputTokens": 12, "costUsd": 0.5})),
            RequestOutcome::Answered { answers: json!({"a": 1}), input_tokens: 12.0, cost_usd: 0.5 }
        );
        assert_eq!(read(json!({"status": "timeout"})), RequestOutcome::Timeout);
        assert_eq!(read(json!({"status": "error", "message": "500"})), RequestOutcome::Error { message: "500".into() });
        assert!(matches!(read(json!({"status": "weird"})), RequestOutcome::Error { .. }));
        assert!(matches!(read(json!(null)), RequestOutcome::Error { .. }));
        let odd = read(json!({"status": "answered", "inputTokens": "many"}));
        assert_eq!(odd.usage(), (0.0, 0.0));
        assert_eq!(odd.answer("keep_whole"), None);
    }

    #[test]
    fn trace_probabilities() {
        assert_eq!(trace_p(0.15), ".15");
        assert_eq!(trace_p(0.06), ".06");
        assert_eq!(trace_p(0.999), "1");
        assert_eq!(trace_p(0.001), "0");
        assert_eq!(trace_p(f64::NAN), "0");
    }

    fn run() -> Run {
        Run {
            question: "where is status handled?".into(),
            answer: "In src/status.ts.".into(),
            notes: "Searching.".into(),
            ..Run::default()
        }
    }

    #[test]
    fn the_request_has_the_state_and_questions_of_the_guard() {
        let r = run();
        let texts = ["a:1:x", "b:2:y"];
        let args = json!({"command": "rg -n status"});
        let input = RequestInput {
            run: &r,
            tool: "bash",
            arguments: &args,
            is_error: false,
            lines: 410,
            part: 2,
            parts: 3,
            first_number: 41,
            chunk_texts: &texts,
        };
        let v = serde_json::to_value(large_request(&input)).unwrap();
        let state = v["state"].as_object().unwrap();
        let keys: Vec<&str> = state.keys().map(String::as_str).collect();
        let mut expected = vec![
            "agent_notes_during_the_run",
            "chunks",
            "final_answer",
            "output_size",
            "situation",
            "tool",
            "tool_arguments",
            "user_question",
        ];
        expected.sort();
        assert_eq!(keys, expected);
        assert_eq!(state["output_size"], "410 lines, part 2 of 3");
        assert_eq!(state["tool_arguments"], r#"{"command":"rg -n status"}"#);
        assert_eq!(state["chunks"]["chunk_42"], "b:2:y");
        assert!(!state["situation"].as_str().unwrap().contains("earlier_conversation"));
        let q = &v["questions"];
        assert_eq!(q["keep_whole"]["type"], "bool");
        assert_eq!(q["focus"]["type"], "choice");
        let options: Vec<&String> = q["focus"]["criteria"].as_object().unwrap().keys().collect();
        assert_eq!(options.len(), 4);
        assert!(q["focus"]["criteria"]["chunk_41"].is_string());
        assert_eq!(q["chunk_41"]["criteria"]["true"], "chunk_41 is needed");
        assert!(!q["chunk_41"]["instructions"].as_str().unwrap().contains("earlier_conversation"));

        // Field order and chunk order as serialized.
        let text = serde_json::to_string(&large_request(&input)).unwrap();
        let order = [
            "situation",
            "user_question",
            "final_answer",
            "agent_notes_during_the_run",
            "tool\"",
            "output_size",
            "chunks",
        ];
        let at: Vec<usize> = order.iter().map(|k| text.find(&format!("\"{k}")).unwrap()).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
        assert!(text.find("\"chunk_41\"").unwrap() < text.find("\"chunk_42\"").unwrap());
    }

    #[test]
    fn history_errors_and_clipping_in_the_request() {
        let mut r = run();
        r.question = "q".repeat(10_000);
        r.notes = "  ".into();
        r.history.exchanges.push(Exchange { user: "before".into(), assistant: "did".into() });
        let input = RequestInput {
            run: &r,
            tool: "bash",
            arguments: &Value::Null,
            is_error: true,
            lines: 1,
            part: 1,
            parts: 1,
            first_number: 1,
            chunk_texts: &["x"],
        };
        let v = serde_json::to_value(large_request(&input)).unwrap();
        let st = &v["state"];
        assert_eq!(js_len(st["user_question"].as_str().unwrap()), QUESTION_MAX);
        assert!(st.get("agent_notes_during_the_run").is_none());
        assert!(st["tool_status"].as_str().unwrap().contains("failed"));
        assert_eq!(st["output_size"], "1 line");
        assert_eq!(st["tool_arguments"], "{}");
        assert_eq!(st["earlier_conversation"], json!({"recent_exchanges": [{"user": "before", "assistant": "did"}]}));
        assert!(st["situation"].as_str().unwrap().contains("earlier_conversation"));
        assert!(v["questions"]["chunk_1"]["instructions"].as_str().unwrap().contains("even if the current question"));
    }

    fn verdict(keep: Vec<bool>, reason: Reason) -> Verdict {
        Verdict { keep, reason, trace: "t".into() }
    }

    #[test]
    fn per_result_union_not_worth_and_removal() {
        let text: String = (0..400).map(|i| format!("{i:03} {}\n", "x".repeat(36))).collect();
        let c = chunk(&text);
        let n = c.chunks.len();
        assert!(n >= 10);
        let half = n / 2;
        let segs = [
            Segment { first: 0, count: half, chars: 0, oversize: false },
            Segment { first: half, count: n - half, chars: 0, oversize: false },
        ];
        let input = |segments: &'static [(Segment, Verdict)]| ResultInput {
            text: Box::leak(text.clone().into_boxed_str()),
            chunks: Box::leak(c.chunks.clone().into_boxed_slice()),
            grep: false,
            segments,
            answer: "",
            label: "bash `x`",
            entry_id: "e1",
            numbering: Numbering::Output,
            lines: 400,
            chars: js_len(&text),
        };
        let leak = |v: Vec<(Segment, Verdict)>| -> &'static [(Segment, Verdict)] { Box::leak(v.into_boxed_slice()) };

        // One chunk kept in the first segment, the second removed.
        let mut k1 = vec![false; half];
        k1[1] = true;
        let d = decide_result(
            &input(leak(vec![
                (segs[0], verdict(k1, Reason::Chunks)),
                (segs[1], verdict(vec![false; n - half], Reason::NoneNeeded)),
            ])),
            &s(),
        );
        assert_eq!(d.outcome, Outcome::Distilled);
        assert_eq!(d.reason, "chunks,none-needed");
        assert_eq!(d.trace, "t | t");
        assert!(d.after_chars < js_len(&text));
        assert!(d.replacement.as_deref().unwrap().starts_with("[context-guard] Distilled"));

        // A failed segment keeps its chunks; over maxKeepRatio → not-worth.
        let d = decide_result(
            &input(leak(vec![
                (segs[0], verdict(vec![true; half], Reason::Timeout)),
                (segs[1], verdict(vec![true; n - half], Reason::WholeNeeded)),
            ])),
            &s(),
        );
        assert_eq!((d.outcome, d.reason.as_str()), (Outcome::Kept, "timeout,whole-needed"));
        assert!(d.replacement.is_none());
        let d = decide_result(
            &input(leak(vec![
                (segs[0], verdict(vec![true; half], Reason::Error)),
                (segs[1], verdict(vec![false; n - half], Reason::NoneNeeded)),
            ])),
            &Settings { max_keep_ratio: 0.3, ..s() },
        );
        assert_eq!((d.outcome, d.reason.as_str()), (Outcome::Kept, "not-worth"));

        // Nothing kept anywhere → removed, one line.
        let d = decide_result(
            &input(leak(vec![
                (segs[0], verdict(vec![false; half], Reason::NoneNeeded)),
                (segs[1], verdict(vec![false; n - half], Reason::NoneNeeded)),
            ])),
            &s(),
        );
        assert_eq!(d.outcome, Outcome::Removed);
        assert_eq!(d.replacement.as_deref().unwrap().lines().count(), 1);
    }

    #[test]
    fn a_replacement_not_shorter_is_not_worth_it() {
        // Two tiny chunks: the header alone is longer than the output.
        let text = "a\n\nb\n";
        let chunks = vec![
            Chunk { start: 0, end: 2, first_line: 0, lines: 1, chars: 2, files: vec![] },
            Chunk { start: 2, end: 5, first_line: 1, lines: 2, chars: 3, files: vec![] },
        ];
        let seg = Segment { first: 0, count: 2, chars: 5, oversize: false };
        let segments = [(seg, verdict(vec![false, true], Reason::Chunks))];
        let r = ResultInput {
            text,
            chunks: &chunks,
            grep: false,
            segments: &segments,
            answer: "",
            label: "bash",
            entry_id: "e",
            numbering: Numbering::Output,
            lines: 3,
            chars: 5,
        };
        let d = decide_result(&r, &Settings { max_keep_ratio: 1.0, ..s() });
        assert_eq!((d.outcome, d.reason.as_str()), (Outcome::Kept, "not-worth"));
    }

    #[test]
    fn keep_cited_files_adds_grep_chunks_of_named_files() {
        let mut text = String::new();
        for f in ["src/status.ts", "src/other.ts", "test/fixtures/entities.json"] {
            for i in 1..=30 {
                text.push_str(&format!("{f}:{i}:{}\n", "s".repeat(40)));
            }
        }
        let c = chunk(&text);
        assert!(c.grep);
        let n = c.chunks.len();
        let seg = Segment { first: 0, count: n, chars: 0, oversize: false };
        let segments = [(seg, verdict(vec![false; n], Reason::NoneNeeded))];
        let r = ResultInput {
            text: &text,
            chunks: &c.chunks,
            grep: true,
            segments: &segments,
            answer: "Status is handled in `./src/status.ts:12`.",
            label: "bash",
            entry_id: "e",
            numbering: Numbering::Grep,
            lines: 90,
            chars: js_len(&text),
        };
        let off = decide_result(&r, &s());
        assert_eq!(off.outcome, Outcome::Removed);
        let on = decide_result(&r, &Settings { keep_cited_files: true, ..s() });
        assert_eq!(on.outcome, Outcome::Distilled);
        for (chunk, k) in c.chunks.iter().zip(&on.keep) {
            assert_eq!(*k, chunk.files.contains(&"src/status.ts".to_string()));
        }
    }

    #[test]
    fn cited_files() {
        let c = Cited::new("See /repo/src/a.ts#L3, lib/b.rs:10:2 and c.md. Not d");
        assert!(c.names("src/a.ts"));
        assert!(c.names("./src/a.ts"));
        assert!(c.names("lib/b.rs"));
        assert!(c.names("x/lib/b.rs"));
        assert!(!c.names("other/b.rs"));
        assert!(c.names("docs/c.md"));
        assert!(!c.names("d"));
    }
}
