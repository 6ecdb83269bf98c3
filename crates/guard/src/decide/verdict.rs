//! One answered segment read as its keep set (docs/GUARD.md, "What it
//! judges").
//!
//! Answers are read defensively: a missing key, a number that is not finite
//! or not within 0–1, or a choice that was not offered counts as no answer,
//! and a segment without every answer keeps all its chunks.

use serde::{Deserialize, Serialize};

use crate::classify::{trace_p, ClassifierAnswer, RequestOutcome};
use crate::settings::Settings;

use super::request::chunk_key;

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
/// `first_number`, in this order: error → keep all; `keep_whole` or
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn answered(answers: Value) -> RequestOutcome {
        RequestOutcome::Answered { answers: answers.into(), input_tokens: 100.0, cost_usd: 0.0001 }
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
            RequestOutcome::Answered { answers: json!({"a": 1}).into(), input_tokens: 12.0, cost_usd: 0.5 }
        );
        assert_eq!(read(json!({"status": "timeout"})), RequestOutcome::Timeout);
        assert_eq!(read(json!({"status": "error", "message": "500"})), RequestOutcome::Error { message: "500".into() });
        assert!(matches!(read(json!({"status": "weird"})), RequestOutcome::Error { .. }));
        assert!(matches!(read(json!(null)), RequestOutcome::Error { .. }));
        let odd = read(json!({"status": "answered", "inputTokens": "many"}));
        assert_eq!(odd.usage(), (0.0, 0.0));
        assert_eq!(odd.answer("keep_whole"), None);
    }

    /// A judge's reply (`guard/judge.rs`) for the same probabilities as `answers(kw, focus(choice, p), chunks)`.
    fn replied(kw: f64, choice: &str, p: f64, chunks: &[f64]) -> RequestOutcome {
        let mut m = serde_json::Map::new();
        m.insert("keep_whole".into(), json!(kw));
        m.insert("focus".into(), json!({ "choice": choice, "probability": p }));
        for (i, p) in chunks.iter().enumerate() {
            m.insert(format!("chunk_{}", i + 1), json!(p));
        }
        let text = format!("{}", json!({ "answers": m }));
        RequestOutcome::from_value(json!({ "status": "replied", "text": text, "inputTokens": 100, "costUsd": 0.0001 }))
    }

    #[test]
    fn a_judge_reply_means_what_the_same_classifier_answers_mean() {
        let n = 4;
        for (kw, choice, p, chunks) in [
            (0.7, "none", 0.9, [0.0; 4]),
            (0.2, "whole", 0.6, [0.0; 4]),
            (0.15, "chunk_4", 0.52, [0.9, 0.59, 0.6, 0.1]),
            (0.1, "none", 0.5, [0.1; 4]),
            (0.1, "none", 0.9, [0.1, 0.1, 0.7, 0.1]),
            (0.1, "whole", 0.4, [0.1; 4]),
            (0.1, "chunk_9", 0.9, [0.1; 4]),
        ] {
            let judge = interpret(&replied(kw, choice, p, &chunks), 1, n, &s());
            assert_eq!(
                judge,
                interpret(&answers(kw, focus(choice, p, json!({})), &chunks), 1, n, &s()),
                "{kw} {choice} {p}"
            );
        }
        // A bare choice is a certain one; a missing chunk answer, a malformed or refused reply keep all, usage counted.
        let bare = RequestOutcome::from_value(
            json!({"status": "replied", "text": r#"{"answers":{"keep_whole":0,"focus":"none","chunk_1":0}}"#}),
        );
        assert_eq!(interpret(&bare, 1, 1, &s()).reason, Reason::NoneNeeded);
        let partial = replied(0.1, "none", 0.9, &[0.1; 3]);
        assert_eq!(interpret(&partial, 1, n, &s()).trace, "no-answer (chunk_4)");
        for text in ["I can't help with that.", "{\"answers\": {\"keep_whole\": 0.1,", ""] {
            let o = RequestOutcome::from_value(
                json!({"status": "replied", "text": text, "inputTokens": 70, "costUsd": 0.002}),
            );
            let v = interpret(&o, 1, n, &s());
            assert_eq!(
                (v.keep, v.reason, v.trace.as_str()),
                (vec![true; n], Reason::NoAnswer, "no-answer (keep_whole)"),
                "{text}"
            );
            assert_eq!(o.usage(), (70.0, 0.002));
        }
    }

    #[test]
    fn trace_probabilities() {
        assert_eq!(trace_p(0.15), ".15");
        assert_eq!(trace_p(0.06), ".06");
        assert_eq!(trace_p(0.999), "1");
        assert_eq!(trace_p(0.001), "0");
        assert_eq!(trace_p(f64::NAN), "0");
    }
}
