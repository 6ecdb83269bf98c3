//! What every classifier request is made of: mirrors of Pi's classifier
//! types, the state of each kind of request, and how an answer is read.
//!
//! The types mirror Pi's classifier API (`@earendil-works/pi-ai`
//! `ClassifierContext`, `ClassifierQuestion`, `ClassifierAnswer`):
//! `classify(model, { state, questions }, opts)` answers
//! `{ answers, usage, stopReason, errorMessage }`, a bool question with
//! `{ probability }` and a choice with `{ choice, probabilities, confidence }`.
//!
//! For: those types, the [`State`] of each kind of request (a large output's
//! segment, a batch of small outputs, a batch of old exchanges) with the
//! [`RunFields`] they open with, the outcome of one request as the extension
//! reports it, and the trace's probabilities. Not for: what to ask
//! (`decide`, `items`, `exchange`) or writing the JSON (`json`). It sits below
//! all of them, so that the request kinds can share one `State` without
//! importing each other.

use std::cell::Cell;
use std::rc::Rc;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::chunk::FastMap;
use crate::run::{History, Run};
use crate::text::clip_middle;

/// Request limits in JavaScript characters (docs/GUARD.md, "What is sent to the classifier").
pub const QUESTION_MAX: usize = 4000;
pub const ANSWER_MAX: usize = 6000;
pub const NOTES_MAX: usize = 2000;
pub const ARGUMENTS_MAX: usize = 600;

// ---------------------------------------------------------------------------
// Pi's classifier types

/// A JSON object whose keys keep their order (`chunk_1`, `chunk_2`, …,
/// `chunk_10`: the classifier reads them in order, and a sorted map would put
/// `chunk_10` before `chunk_2`). In TypeScript a `HashMap` (`ts(as)`): the same object.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ordered<V>(pub Vec<(String, V)>);

impl<V> Ordered<V> {
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<V: Serialize> Serialize for Ordered<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Visit<V> {
            type Value = Ordered<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered<V>, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    out.push(entry);
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// The name of the chunk numbered `n` (1-based, across the output).
pub fn chunk_key(n: usize) -> String {
    let mut key = String::with_capacity(16);
    push_chunk_key(&mut key, n);
    key
}

/// Appends [`chunk_key`]`(n)`.
pub fn push_chunk_key(out: &mut String, n: usize) {
    out.push_str("chunk_");
    crate::text::push_usize(out, n);
}

/// Pi's `ClassifierContext`: the state to judge and the questions about it.
/// Serialized as Pi takes it: `{ state, questions }`, the chunk questions
/// written out (see [`ChunkQuestions`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifierContext {
    pub state: State,
    pub questions: Ordered<ClassifierQuestion>,
    /// A large output's segment asks the same of each of its chunks: kept
    /// here once, written out after `questions` (and into its choice) when
    /// serialized, so a plan of thousands of chunks neither words nor carries
    /// thousands of questions (`wire::requests` sends them in this form).
    pub chunk_questions: Option<ChunkQuestions>,
}

/// The questions about each chunk of a segment, chunks `chunk_{first}` to
/// `chunk_{first + count - 1}` (the keys of its state's `chunks`), in order:
/// one bool question keyed by the chunk, and one option of the request's
/// choice question (after its own options), each text worded around the key.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkQuestions {
    pub first: usize,
    pub count: usize,
    pub option: Template,
    pub instructions: Template,
    pub yes: Template,
    pub no: Template,
}

/// A text worded around a key: `before`, the key, `after`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Template {
    pub before: String,
    pub after: String,
}

impl Template {
    pub fn new(before: &str, after: &str) -> Template {
        Template { before: before.to_string(), after: after.to_string() }
    }

    pub fn with(&self, key: &str) -> String {
        let mut s = String::with_capacity(self.before.len() + key.len() + self.after.len());
        s.push_str(&self.before);
        s.push_str(key);
        s.push_str(&self.after);
        s
    }
}

impl ChunkQuestions {
    /// The chunks' keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = String> + '_ {
        (0..self.count).map(|i| chunk_key(self.first.saturating_add(i)))
    }
}

impl ClassifierContext {
    /// The questions as Pi takes them: the chunk questions written out.
    pub fn all_questions(&self) -> Ordered<ClassifierQuestion> {
        let Some(per) = &self.chunk_questions else { return self.questions.clone() };
        let mut out: Vec<(String, ClassifierQuestion)> = self
            .questions
            .0
            .iter()
            .map(|(k, q)| {
                let q = match q {
                    ClassifierQuestion::Choice { instructions, criteria } => {
                        let mut options = criteria.0.clone();
                        options.extend(per.keys().map(|key| {
                            let option = per.option.with(&key);
                            (key, option)
                        }));
                        ClassifierQuestion::Choice { instructions: instructions.clone(), criteria: Ordered(options) }
                    }
                    q => q.clone(),
                };
                (k.clone(), q)
            })
            .collect();
        out.extend(per.keys().map(|key| {
            let q = ClassifierQuestion::Bool {
                instructions: per.instructions.with(&key),
                criteria: BoolCriteria { yes: per.yes.with(&key), no: per.no.with(&key) },
            };
            (key, q)
        }));
        Ordered(out)
    }
}

impl Serialize for ClassifierContext {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("state", &self.state)?;
        match &self.chunk_questions {
            None => map.serialize_entry("questions", &self.questions)?,
            Some(_) => map.serialize_entry("questions", &self.all_questions())?,
        }
        map.end()
    }
}

/// The state of a request, by kind. Serialized as the inner object (Pi's
/// `state` is any JSON object). Whole items and mid-run checkpoints add
/// their kinds here.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "ClassifierState"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum State {
    Large(LargeState),
    /// Small outputs judged whole (`items`).
    Small(SmallState),
    /// Old exchanges (`exchange`).
    Exchange(ExchangeState),
}

/// Pi's `ClassifierQuestion`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "GuardClassifierQuestion"))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ClassifierQuestion {
    Choice {
        instructions: String,
        #[cfg_attr(feature = "ts", ts(as = "std::collections::HashMap<String, String>"))]
        criteria: Ordered<String>,
    },
    Score {
        instructions: String,
        criteria: Vec<String>,
    },
    Bool {
        instructions: String,
        criteria: BoolCriteria,
    },
}

/// The two criteria of a bool question.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoolCriteria {
    #[serde(rename = "true")]
    pub yes: String,
    #[serde(rename = "false")]
    pub no: String,
}

/// Pi's `ClassifierAnswer`, validated (see [`ClassifierAnswer::from_value`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ClassifierAnswer {
    Choice { choice: String, probabilities: Ordered<f64>, confidence: f64 },
    Score { score: f64, confidence: f64 },
    Bool { probability: f64 },
}

fn probability(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|p| p.is_finite() && (0.0..=1.0).contains(p))
}

impl ClassifierAnswer {
    /// Reads an answer by its shape (a provider may leave out `type`):
    /// `probability` makes a bool, `choice` a choice, `score` a score. Every
    /// probability must be a finite number within 0–1, else `None`.
    pub fn from_value(v: &Value) -> Option<ClassifierAnswer> {
        let obj = v.as_object()?;
        let field = |k: &str| obj.get(k);
        ClassifierAnswer::from_fields(&AnswerFields {
            choice: field("choice"),
            probabilities: field("probabilities"),
            confidence: field("confidence"),
            probability: field("probability"),
            score: field("score"),
        })
    }

    /// [`from_value`](Self::from_value) from the fields it reads (`None`: missing).
    pub fn from_fields(f: &AnswerFields) -> Option<ClassifierAnswer> {
        if let Some(choice) = f.choice {
            let choice = choice.as_str()?.to_string();
            let mut probabilities = Vec::new();
            if let Some(p) = f.probabilities {
                for (k, v) in p.as_object()? {
                    probabilities.push((k.clone(), probability(Some(v))?));
                }
            }
            let confidence = match f.confidence {
                None | Some(Value::Null) => None,
                c => Some(probability(c)?),
            };
            let confidence =
                confidence.or_else(|| probabilities.iter().find(|(k, _)| *k == choice).map(|(_, p)| *p))?;
            return Some(ClassifierAnswer::Choice { choice, probabilities: Ordered(probabilities), confidence });
        }
        if f.probability.is_some() {
            return Some(ClassifierAnswer::Bool { probability: probability(f.probability)? });
        }
        let score = f.score?.as_f64().filter(|s| s.is_finite())?;
        Some(ClassifierAnswer::Score { score, confidence: probability(f.confidence).unwrap_or(0.0) })
    }
}

/// The fields of an answer that [`ClassifierAnswer::from_value`] reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnswerFields<'a> {
    pub choice: Option<&'a Value>,
    pub probabilities: Option<&'a Value>,
    pub confidence: Option<&'a Value>,
    pub probability: Option<&'a Value>,
    pub score: Option<&'a Value>,
}

/// Pi's `result.answers` as read: each answer by its key, read with
/// [`ClassifierAnswer::from_value`] (`None`: not a valid answer), in the
/// order given, each key once: a key given twice counts as its last answer,
/// as in a JSON object read into a map.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answers {
    entries: Vec<(String, Option<ClassifierAnswer>)>,
    /// Where the next lookup starts: keys are asked in about the order they
    /// were answered (a segment's chunks, in order), so most lookups take
    /// one comparison instead of a scan.
    next: Cell<usize>,
}

impl Answers {
    /// Answers in the order given; of a key given twice, the last.
    pub fn new(mut entries: Vec<(String, Option<ClassifierAnswer>)>) -> Answers {
        let mut seen: FastMap<&str, u32> = FastMap::default();
        if entries.iter().any(|(k, _)| seen.insert(k, 0).is_some()) {
            // Not from JSON.stringify: keep each key's last answer, where it was.
            let last: Vec<bool> = (0..entries.len())
                .map(|i| entries.iter().skip(i + 1).all(|(k, _)| Some(k) != entries.get(i).map(|(k, _)| k)))
                .collect();
            let mut at = 0;
            entries.retain(|_| {
                at += 1;
                last.get(at - 1).copied().unwrap_or(true)
            });
        }
        Answers { entries, next: Cell::new(0) }
    }

    /// The answers of a JSON object; anything else has none.
    pub fn from_value(v: &Value) -> Answers {
        match v {
            Value::Object(map) => {
                Answers::new(map.iter().map(|(k, a)| (k.clone(), ClassifierAnswer::from_value(a))).collect())
            }
            _ => Answers::default(),
        }
    }

    /// Each key and its answer, in order.
    pub fn entries(&self) -> &[(String, Option<ClassifierAnswer>)] {
        &self.entries
    }

    /// The answer to `key`, if valid: searched from where the last lookup
    /// ended, around to it.
    pub fn get(&self, key: &str) -> Option<&ClassifierAnswer> {
        let n = self.entries.len();
        let start = self.next.get().min(n);
        let (after, before) = (self.entries.get(start..).unwrap_or(&[]), self.entries.get(..start).unwrap_or(&[]));
        let i = after
            .iter()
            .position(|(k, _)| k == key)
            .map(|i| start + i)
            .or_else(|| before.iter().position(|(k, _)| k == key))?;
        self.next.set(i + 1);
        self.entries.get(i).and_then(|(_, a)| a.as_ref())
    }
}

impl Answers {
    /// A chat model's reply to a judge's prompt (`guard/judge.rs`), read as a
    /// classifier's answers: a number from 0 to 1 (or `true`/`false`) is a
    /// bool's probability; a string, or `{ choice, probability }`, a choice
    /// with that probability (1 for a bare string or none given). Any other
    /// answer is invalid, as a classifier's would be. The object may sit in a
    /// code fence or after a line of prose; a reply without a JSON object
    /// holding an `answers` object (a refusal, prose, a cut-off reply) answers
    /// nothing.
    pub fn from_judge(reply: &str) -> Answers {
        let bytes = reply.as_bytes();
        let value = crate::text::find_byte(bytes, b'{').and_then(|start| {
            let end = bytes.iter().rposition(|&b| b == b'}')?;
            serde_json::from_str::<Value>(reply.get(start..=end)?).ok()
        });
        let Some(Value::Object(answers)) = value.as_ref().and_then(|v| v.get("answers")) else {
            return Answers::default();
        };
        Answers::new(answers.iter().map(|(id, a)| (id.clone(), judge_answer(a))).collect())
    }
}

/// One answer of a judge's reply (see [`Answers::from_judge`]).
fn judge_answer(a: &Value) -> Option<ClassifierAnswer> {
    let (choice, p) = match a {
        Value::Bool(yes) => return Some(ClassifierAnswer::Bool { probability: if *yes { 1.0 } else { 0.0 } }),
        Value::String(choice) => (choice.as_str(), 1.0),
        Value::Object(o) => {
            (o.get("choice")?.as_str()?, o.get("probability").map_or(Some(1.0), |p| probability(Some(p)))?)
        }
        _ => return Some(ClassifierAnswer::Bool { probability: probability(Some(a))? }),
    };
    let choice = choice.to_string();
    Some(ClassifierAnswer::Choice { probabilities: Ordered(vec![(choice.clone(), p)]), choice, confidence: p })
}

impl From<Value> for Answers {
    fn from(v: Value) -> Answers {
        Answers::from_value(&v)
    }
}

/// Written as the object of its valid answers, which reads back the same.
impl Serialize for Answers {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let valid: Vec<(&String, &ClassifierAnswer)> =
            self.entries.iter().filter_map(|(k, a)| Some((k, a.as_ref()?))).collect();
        let mut map = s.serialize_map(Some(valid.len()))?;
        for (k, a) in valid {
            map.serialize_entry(k, a)?;
        }
        map.end()
    }
}

/// How one request ended, as the extension's request runner reports it
/// (`extension/guard/requests.ts`, `RequestOutcome`): answered (Pi's result
/// stopped normally), error, or timeout; a chat model's reply (`replied`,
/// its `text`) is read by [`Answers::from_judge`] as answered. Read by hand from a JSON value (like
/// `entry::Message`): an unknown status counts as an error, so it keeps.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum RequestOutcome {
    #[serde(rename_all = "camelCase")]
    Answered {
        /// Pi's `result.answers`, each read with [`ClassifierAnswer::from_value`].
        #[serde(default)]
        answers: Answers,
        #[serde(default)]
        input_tokens: f64,
        #[serde(default)]
        cost_usd: f64,
    },
    Error {
        #[serde(default)]
        message: String,
    },
    Timeout,
}

crate::deserialize_via_value!(RequestOutcome);

impl RequestOutcome {
    pub fn from_value(v: Value) -> RequestOutcome {
        let number = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        match v.get("status").and_then(Value::as_str) {
            Some("answered") => RequestOutcome::Answered {
                input_tokens: number(&v, "inputTokens"),
                cost_usd: number(&v, "costUsd"),
                answers: v.get("answers").map(Answers::from_value).unwrap_or_default(),
            },
            // A chat model's reply (`extension/guard/judge.ts`), read here so that the pass
            // takes a judge's answers exactly as a classifier's. A reply that is not
            // the JSON asked for answers nothing, so everything it asked about is kept
            // (`no-answer`), and its tokens and cost still count: they were spent.
            Some("replied") => RequestOutcome::Answered {
                input_tokens: number(&v, "inputTokens"),
                cost_usd: number(&v, "costUsd"),
                answers: Answers::from_judge(v.get("text").and_then(Value::as_str).unwrap_or("")),
            },
            Some("timeout") => RequestOutcome::Timeout,
            status => RequestOutcome::Error {
                message: v
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("unknown request status {}", status.unwrap_or("(none)"))),
            },
        }
    }

    /// A validated answer by question key.
    pub fn answer(&self, key: &str) -> Option<ClassifierAnswer> {
        match self {
            RequestOutcome::Answered { answers, .. } => answers.get(key).cloned(),
            _ => None,
        }
    }

    /// Input tokens and cost, 0 when not a finite non-negative number.
    pub fn usage(&self) -> (f64, f64) {
        let clean = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
        match self {
            RequestOutcome::Answered { input_tokens, cost_usd, .. } => (clean(*input_tokens), clean(*cost_usd)),
            _ => (0.0, 0.0),
        }
    }
}

// ---------------------------------------------------------------------------
// The state of each kind of request

/// The fields every request's state opens with, for each kind of item: the
/// situation, and the run the items are judged against (whole items reuse them).
// Not exported: flattened into the states.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunFields {
    pub situation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub earlier_conversation: Option<EarlierConversation>,
    pub user_question: String,
    /// The run's answer; none at a checkpoint (the run goes on).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub final_answer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub agent_notes_during_the_run: Option<String>,
    /// At a checkpoint, in place of the answer and the notes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub agent_progress: Option<AgentProgress>,
}

/// What the agent wrote so far in a run that goes on (`agent_progress`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentProgress {
    /// The latest assistant text, ≤ 2,000.
    pub latest_note: String,
    /// Earlier assistant text of the run, its last 2,000 (the start clipped).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub earlier_notes: Option<String>,
}

impl RunFields {
    /// The run's question, answer and notes clipped to their limits; at a
    /// checkpoint (`run.mid_run`) the question and the agent's progress.
    pub fn new(situation: String, earlier_conversation: Option<EarlierConversation>, run: &Run) -> RunFields {
        let notes = run.notes.trim();
        let notes = (!notes.is_empty()).then_some(notes);
        let user_question = clip_middle(&run.question, QUESTION_MAX);
        if run.mid_run {
            return RunFields {
                situation,
                earlier_conversation,
                user_question,
                final_answer: None,
                agent_notes_during_the_run: None,
                agent_progress: Some(AgentProgress {
                    latest_note: clip_middle(run.answer.trim(), NOTES_MAX),
                    earlier_notes: notes.map(|n| crate::text::js_suffix(n, NOTES_MAX).to_string()),
                }),
            };
        }
        RunFields {
            situation,
            earlier_conversation,
            user_question,
            final_answer: Some(clip_middle(&run.answer, ANSWER_MAX)),
            agent_notes_during_the_run: notes.map(|n| clip_middle(n, NOTES_MAX)),
            agent_progress: None,
        }
    }
}

/// The state of a large-output request, fields in the order the
/// classifier reads them.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "LargeOutputState"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LargeState {
    #[serde(flatten)]
    pub run: RunFields,
    /// At a checkpoint: labels of the calls made after this output, oldest
    /// first (above 30, the first and last 15 around a gap line).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub later_tool_calls: Option<Vec<String>>,
    /// At a checkpoint: why a later call made this output out of date.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub superseded: Option<String>,
    pub tool: String,
    pub tool_arguments: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tool_status: Option<String>,
    pub output_size: String,
    #[cfg_attr(feature = "ts", ts(as = "std::collections::HashMap<String, String>"))]
    pub chunks: Chunks,
}

/// A segment's chunks as its request carries them: keys `chunk_{first}`, …,
/// in order, each text a range of one shared text (the output's, so a plan
/// neither copies nor frees its chunks one by one). Serialized as the object
/// of key and text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chunks {
    pub first: usize,
    pub text: Rc<str>,
    /// Byte ranges of `text`.
    pub ranges: Vec<(usize, usize)>,
    /// Secrets in them were withheld (`secrets::withhold`): `text` is no
    /// longer the output's, so they must cross as strings, not as ranges of
    /// the extension's copy of the output.
    pub withheld: bool,
}

impl Chunks {
    /// Texts one after another in a new shared text.
    pub fn of_texts(first: usize, texts: &[&str]) -> Chunks {
        let mut text = String::with_capacity(texts.iter().map(|t| t.len()).sum());
        let ranges = texts
            .iter()
            .map(|t| {
                let start = text.len();
                text.push_str(t);
                (start, text.len())
            })
            .collect();
        Chunks { first, text: Rc::from(text), ranges, withheld: false }
    }

    /// Each chunk's text, in order (empty if its range does not fit).
    pub fn texts(&self) -> impl Iterator<Item = &str> + '_ {
        self.ranges.iter().map(|&(a, b)| self.text.get(a..b).unwrap_or(""))
    }
}

impl Serialize for Chunks {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.ranges.len()))?;
        for (i, t) in self.texts().enumerate() {
            map.serialize_entry(&chunk_key(self.first.saturating_add(i)), t)?;
        }
        map.end()
    }
}

/// The session before the run, empty parts left out (`earlier_conversation`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EarlierConversation {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub first_request: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent_exchanges: Vec<RecentExchange>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
/// One exchange of the session before the run, as `earlier_conversation`
/// shows it.
pub struct RecentExchange {
    pub user: String,
    pub assistant: String,
}

/// The state of a small-output request, fields in the order the classifier
/// reads them.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "SmallOutputsState"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmallState {
    #[serde(flatten)]
    pub run: RunFields,
    #[cfg_attr(feature = "ts", ts(as = "std::collections::HashMap<String, SmallItem>"))]
    pub outputs: Ordered<SmallItem>,
}

/// One small output as sent.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmallItem {
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub superseded: Option<String>,
    pub output: String,
}

/// An exchange as a request carries it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExchangeItem {
    pub user: String,
    pub assistant: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<String>,
    pub size: String,
}

/// The state of an exchange request.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "ExchangesState"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExchangeState {
    #[serde(flatten)]
    pub run: RunFields,
    #[cfg_attr(feature = "ts", ts(as = "std::collections::HashMap<String, ExchangeItem>"))]
    pub exchanges: Ordered<ExchangeItem>,
}

pub(crate) fn earlier(history: &History) -> Option<EarlierConversation> {
    if history.is_empty() {
        return None;
    }
    Some(EarlierConversation {
        summary: history.summary.clone(),
        first_request: history.first_request.clone(),
        recent_exchanges: history
            .exchanges
            .iter()
            .map(|e| RecentExchange { user: e.user.clone(), assistant: e.assistant.clone() })
            .collect(),
    })
}

/// A probability as the trace shows it: `.15`, `.06`, `0`, `1`.
pub fn trace_p(p: f64) -> String {
    let r = (p * 100.0).round();
    if r >= 100.0 {
        "1".to_string()
    } else if r <= 0.0 || !r.is_finite() {
        "0".to_string()
    } else {
        // 1..=99, so the conversion is exact.
        format!(".{:02}", r as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bool(p: f64) -> Option<ClassifierAnswer> {
        Some(ClassifierAnswer::Bool { probability: p })
    }
    fn choice(c: &str, p: f64) -> Option<ClassifierAnswer> {
        Some(ClassifierAnswer::Choice { choice: c.into(), probabilities: Ordered(vec![(c.into(), p)]), confidence: p })
    }

    #[test]
    fn a_judge_reply_reads_as_a_classifiers_answers() {
        let a = Answers::from_judge(
            r#"{"answers": {"keep_whole": 0.1, "focus": {"choice": "chunk_2", "probability": 0.8}, "chunk_1": 0,
                "output_1": true, "output_2": false, "c": "none", "d": {"choice": "whole"}}}"#,
        );
        for (key, answer) in [
            ("keep_whole", bool(0.1)),
            ("focus", choice("chunk_2", 0.8)),
            ("chunk_1", bool(0.0)),
            ("output_1", bool(1.0)),
            ("output_2", bool(0.0)),
            ("c", choice("none", 1.0)),
            ("d", choice("whole", 1.0)),
        ] {
            assert_eq!(a.get(key).cloned(), answer, "{key}");
        }
        // In a code fence, after prose: the object is read.
        let a = Answers::from_judge("Here you go:\n```json\n{\"answers\": {\"keep_whole\": 0.9}}\n```");
        assert_eq!(a.get("keep_whole").cloned(), bool(0.9));
        // Invalid answers are none.
        let a = Answers::from_judge(
            r#"{"answers": {"a": 1.5, "b": -0.1, "c": null, "d": [0.5], "e": {"choice": 3}, "f": {"choice": "x", "probability": 2},
                "g": {"p": 1}, "h": {"choice": "x", "probability": "high"}}}"#,
        );
        assert_eq!(a.entries().len(), 8);
        for k in ["a", "b", "c", "d", "e", "f", "g", "h"] {
            assert_eq!(a.get(k), None, "{k}");
        }
    }

    #[test]
    fn a_judge_reply_without_the_object_answers_nothing() {
        for reply in [
            "I can't help with that.",
            "",
            "{\"answers\": {\"keep_whole\": 0.1,}}",
            "{\"answers\": {\"keep_whole\": 0.1",
            "{\"answer\": {\"keep_whole\": 0.1}}",
            "{\"answers\": [0.1]}",
            "} {",
        ] {
            assert_eq!(Answers::from_judge(reply), Answers::default(), "{reply}");
        }
        let replied =
            RequestOutcome::from_value(json!({"status": "replied", "text": "no", "inputTokens": 5, "costUsd": 0.25}));
        assert_eq!(
            replied,
            RequestOutcome::Answered { answers: Answers::default(), input_tokens: 5.0, cost_usd: 0.25 }
        );
    }
}
