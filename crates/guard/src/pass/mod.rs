//! The run-end pass, as two pure steps around the classifier (docs/GUARD.md,
//! "What it judges" and "Whole items").
//!
//! For: [`plan`] (entries and settings in; the classifier requests and the
//! pass state out) and [`finish`] (the pass state and how each request ended
//! in; the `context_edit` drafts and the record out). The extension runs the
//! requests in between (limiter, time budget, retries) and appends the
//! drafts. Not for: I/O, timing or the rules of each step (those live in
//! `span`, `chunk`, `decide`, `items`, `exchange`, `images` and `render`).
//!
//! Here: what the pass reads and the state that goes from one step to the
//! other; the steps are [`plan`](mod@plan), [`finish`](mod@finish), and
//! [`boundary`], both steps over the forms that cross to the extension
//! (`plan_json`, `finish_json`: long texts out of line, chunks as ranges).
//! Each step reads the state from here; `boundary` calls the two steps; the
//! steps never call each other (`finish`'s tests make their state with
//! `plan`). Callers use the items re-exported here.
//!
//! Whole items (`items`, `exchange`, `images`) are more requests in the
//! same plan, run by the same limiter, and more results in the same record.
//! Mid-run checkpoints (`checkpoint`) choose their items by other gates
//! and then plan them with the same steps (`plan_items`), so the state, the
//! requests runner, `finish` and the record are the same; `Phase` names them.
//!
//! The pass state is everything `finish` reads. It stays inside the wasm
//! module between the two steps (the extension holds a handle, see
//! `plan_json`), and still an altered one cannot make `finish` panic (ranges
//! are checked; a chunk that does not fit keeps its output, reason
//! `bad-plan`).

pub mod answers;
pub mod boundary;
pub mod finish;
pub mod gate;
pub mod land;
pub mod plan;

pub use boundary::{finish_json, input_json, plan_json, plan_json_by, plan_json_with, Planned};
pub use finish::finish;
pub use land::land;
pub use plan::{choose, plan, plan_items, weigh_judge, Choosing, Chosen, Items, JudgeWeighed, PlannedItems};

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cache::MainModel;
use crate::chunk::{Chunk, Segment};
use crate::classify::{ClassifierContext, RequestOutcome};
use crate::entry::ContextEntry;
use crate::exchange::PlannedExchange;
use crate::images::ImageEdit;
use crate::items::PlannedSmall;
use crate::memo::PlacedRecord;
use crate::outcome::Phase;
use crate::read::Fields;
use crate::render::Numbering;
use crate::scanned::Scanned;
use crate::settings::Settings;

/// What the pass reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassInput {
    /// `event.context.contextEntries` as plain data (see `entry`).
    pub entries: Vec<ContextEntry>,
    pub settings: Settings,
    /// The classifier and its credential are there. Without them only old
    /// images are removed (they need no request).
    pub classifier: bool,
    /// The main model, for the cache rewrite an edit causes (`cache`).
    pub model: MainModel,
    /// The guard's records among `entries` (the memos, `memo`).
    pub records: Vec<PlacedRecord>,
    /// A chat model judges (issue 13): its price and the main model's, for
    /// the judge's break-even (`plan::weigh_judge`). `None` for a classifier.
    pub judge: Option<JudgePrice>,
    /// The lengths (provider requests) of the session's earlier runs and of
    /// the project's saved sessions' runs, newest last: the `median`
    /// estimator of later requests reads them (`worth`).
    pub earlier_runs: Vec<usize>,
    /// Entries a pass still out with the judge holds: another pass
    /// leaves them alone until its answers land or are dropped. To
    /// [`land`], the entries other passes' edits target at the same boundary.
    pub judging: Vec<String>,
    /// The secrets of outputs found when they arrived ([`Scanned`]); what it
    /// does not hold, the pass finds itself. Never read from the JSON.
    #[serde(skip)]
    pub scanned: Rc<Scanned>,
}

/// Dollars per million input tokens, from Pi's catalog (`model.cost`): the
/// judge's `input`, and the main model's `cacheRead` (its `input` when it
/// has no cache price), what a later request pays for each token an edit
/// removes.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgePrice {
    pub input_per_million: f64,
    pub main_per_million: f64,
}

impl Default for PassInput {
    fn default() -> Self {
        PassInput {
            entries: Vec::new(),
            settings: Settings::default(),
            classifier: true,
            model: MainModel::default(),
            records: Vec::new(),
            judge: None,
            earlier_runs: Vec::new(),
            judging: Vec::new(),
            scanned: Rc::default(),
        }
    }
}

/// Why a pass has nothing to ask.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "PassSkip"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Skip {
    /// The guard is off.
    Off,
    /// No user message in the context.
    NoRun,
    /// The run has no large output that may be distilled.
    NoLargeOutputs,
    /// Its large outputs add up to less than `minRunChars`.
    BelowMinRunChars,
    /// No classifier, and no old image to remove.
    NoClassifier,
    /// A checkpoint with `midRun` off.
    MidRunOff,
    /// A checkpoint found no output or exchange it may judge (none eligible).
    NothingEligible,
    /// A checkpoint's eligible items add up to less than the batch.
    BelowBatch,
    /// A checkpoint whose cache rewrite would not pay off (`midRunBreakEven`).
    NotPayingOff,
    /// A checkpoint before the run's turn `midRunMinTurns`, below the room trigger.
    EarlyInRun,
    /// A chat-model judge would cost more than its edits could save (issue 13).
    JudgeNotWorthIt,
    /// A pass at a prompt's first request whose main-model cache has not
    /// lapsed: what waits for a cold cache keeps waiting (`MainModel::lapsed`).
    CacheWarm,
}

impl Skip {
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::Off => "off",
            Skip::NoRun => "no-run",
            Skip::NoLargeOutputs => "no-large-outputs",
            Skip::BelowMinRunChars => "below-min-run-chars",
            Skip::NoClassifier => "no-classifier",
            Skip::MidRunOff => "mid-run-off",
            Skip::NothingEligible => "nothing-eligible",
            Skip::BelowBatch => "below-batch",
            Skip::NotPayingOff => "not-paying-off",
            Skip::EarlyInRun => "early-in-run",
            Skip::JudgeNotWorthIt => "judge-not-worth-it",
            Skip::CacheWarm => "cache-warm",
        }
    }
}

/// The classifier requests of a pass and the state `finish` needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Pi `ClassifierContext`s, to send as they are. Their index is their id:
    /// `finish` takes one outcome per request, in this order.
    pub requests: Vec<ClassifierContext>,
    pub pass: PassState,
}

/// Everything `finish` reads.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PassState {
    pub phase: Phase,
    pub settings: Settings,
    pub skipped: Option<Skip>,
    /// How many requests the plan holds.
    pub requests: usize,
    /// The run's final answer (for `keepCitedFiles`).
    pub answer: String,
    pub outputs: Vec<PlannedOutput>,
    /// Per large output, the context characters from its entry to the end
    /// (the cache rewrite its edit causes; for the exchange break-even).
    pub large_rewrite: Vec<usize>,
    pub small: Vec<PlannedSmall>,
    pub exchanges: Vec<PlannedExchange>,
    /// What the requests do not carry (secrets by kind, secret files), for the record.
    pub withheld: crate::withhold::Withheld,
    pub images: Vec<ImageEdit>,
    /// Provider requests the session has had so far (assistant messages).
    pub requests_so_far: usize,
    /// The main model's cache, for the break-even decisions' record.
    pub cache: crate::cache::Cache,
    /// The main model's prices, for the run end's break-evens.
    pub prices: crate::worth::Prices,
    /// A pass at the first request of a prompt that came after the main
    /// model's cache lapsed (`MainModel::lapsed`): its break-evens weigh no rewrite.
    pub lapsed: Option<usize>,
    /// Break-even decisions already taken (a checkpoint's); `finish`
    /// adds the run end's and puts them all in the record.
    pub break_even: Vec<crate::cache::BreakEven>,
    /// A run end's judge weighing (`plan::weigh_judge`), when it sent nothing.
    pub judge: Option<JudgeWeighed>,
    /// Outputs the plan did not ask about because their edits would not pay
    /// now (`gate`): recorded as `deferred`, weighed again at a later run end.
    pub waiting: Vec<Waiting>,
    /// Set by [`land`] when the answers came after the boundary the pass was
    /// planned at: the record says so.
    pub late: Option<crate::outcome::Late>,
    /// The pass as planned, kept by [`land`]: each landing measures from it.
    pub at_plan: Option<Box<PassState>>,
}

/// An output whose edit waits, not asked about.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Waiting {
    pub kind: crate::outcome::ResultKind,
    pub entry_id: String,
    pub tool: String,
    pub label: String,
    pub chars: usize,
}

/// One large output, cut and assigned to requests.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlannedOutput {
    pub entry_id: String,
    pub tool: String,
    /// As the notes and records name it, such as ``bash `rg -n status` ``.
    pub label: String,
    pub is_error: bool,
    /// The model-visible text.
    pub text: String,
    pub chars: usize,
    pub lines: usize,
    pub grep: bool,
    /// For `read` output, the file line of its first line (omission lines
    /// then give file line numbers).
    pub file_offset: Option<usize>,
    pub chunks: Vec<Chunk>,
    pub segments: Vec<PlannedSegment>,
    /// The out-of-line input text that `text` is, when it is one
    /// ([`plan_json`]): then kept chunks cross back as ranges of it.
    pub source: Option<usize>,
    /// Requests expected to carry it after a run end (`gate::later_by_index`).
    pub later: usize,
}

impl PlannedOutput {
    /// Each chunk's text as a range of `text` in UTF-16 units: the chunks
    /// cover the output in order and their `chars` are JavaScript lengths,
    /// so a chunk starts at the sum of the sizes before it; its text leaves
    /// out its final newline (see `chunk_text`).
    pub fn chunk_units(&self) -> Vec<(usize, usize)> {
        let mut at = 0usize;
        self.chunks
            .iter()
            .map(|c| {
                let start = at;
                at = at.saturating_add(c.chars);
                let newline = matches!(self.text.as_bytes().get(c.end.wrapping_sub(1)), Some(b'\n'));
                (start, at.saturating_sub(usize::from(newline)))
            })
            .collect()
    }

    /// How its omission lines locate what they stand for.
    pub fn numbering(&self) -> Numbering {
        match (self.grep, self.file_offset) {
            (true, _) => Numbering::Grep,
            (false, Some(offset)) => Numbering::File { offset },
            (false, None) => Numbering::Output,
        }
    }
}

/// A segment and the request that carries it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlannedSegment {
    pub segment: Segment,
    /// Index in `Plan::requests`; `None` for an oversize segment (never sent).
    pub request: Option<usize>,
}

/// How the requests ended, as the extension's runner reports them
/// (`RunResult` of `extension/guard/requests.ts`).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassAnswers {
    /// One per request, in the order of `Plan::requests`. A missing one counts
    /// as a timeout when `timedOut`, else as an error.
    pub outcomes: Vec<RequestOutcome>,
    pub timed_out: bool,
    /// Milliseconds the requests took.
    pub ms: f64,
}

impl PassInput {
    pub fn from_value(v: Value) -> PassInput {
        let mut f = Fields::of(v);
        PassInput {
            entries: f.list("entries", ContextEntry::from_value),
            settings: match f.take("settings") {
                Value::Object(map) => crate::settings::parse_object(&map),
                _ => Settings::default(),
            },
            classifier: !matches!(f.take("classifier"), Value::Bool(false)),
            model: MainModel::from_value(f.take("model")),
            records: f.list("records", PlacedRecord::from_value).into_iter().flatten().collect(),
            judge: match f.take("judge") {
                Value::Object(map) => {
                    let j = Fields::of(Value::Object(map));
                    Some(JudgePrice {
                        input_per_million: j.number("inputPerMillion").unwrap_or(0.0),
                        main_per_million: j.number("mainPerMillion").unwrap_or(0.0),
                    })
                }
                _ => None,
            },
            earlier_runs: f.list("earlierRuns", |n| n.as_u64().and_then(|n| usize::try_from(n).ok()).unwrap_or(0)),
            judging: f.list("judging", |v| v.as_str().unwrap_or_default().to_string()),
            scanned: Rc::default(),
        }
    }
}

impl PassAnswers {
    pub fn from_value(v: Value) -> PassAnswers {
        let mut f = Fields::of(v);
        PassAnswers {
            outcomes: f.list("outcomes", RequestOutcome::from_value),
            timed_out: f.boolean("timedOut"),
            ms: f.number("ms").unwrap_or(0.0),
        }
    }
}

crate::deserialize_via_value!(PassInput, PassAnswers);

/// The chunks cover the text exactly, in order, and the sizes agree: what
/// `plan` made, and what `finish` relies on to copy kept chunks verbatim.
fn covers(o: &PlannedOutput) -> bool {
    let mut at = 0;
    let mut chars = 0usize;
    for c in &o.chunks {
        if c.start != at || c.end <= c.start || o.text.get(c.start..c.end).is_none() {
            return false;
        }
        at = c.end;
        chars = chars.saturating_add(c.chars);
    }
    at == o.text.len() && chars == o.chars
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::decide::Outcome as ResultOutcome;
    use crate::outcome::{Draft, ResultKind};
    use crate::testing::{call, entry, result, say, user};
    use serde_json::{json, Value};

    pub(super) fn grep_text(files: usize) -> String {
        let mut s = String::new();
        for f in 0..files {
            for m in 0..4 {
                s.push_str(&format!("src/f{f}.ts:{}:  status = {m} 日本 😀\n", m * 7 + 1));
            }
        }
        s
    }

    pub(super) fn input(outputs: &[(&str, &str, Value, String)]) -> PassInput {
        let mut entries = vec![entry("u0", user("earlier")), entry("a0", say("earlier answer"))];
        entries.push(entry("u", user("where is status set?")));
        for (i, (tool, _, args, _)) in outputs.iter().enumerate() {
            entries.push(entry(&format!("a{i}"), call(&format!("c{i}"), tool, args.clone())));
            entries.push(entry(&format!("r{i}"), result(&format!("c{i}"), tool, &outputs[i].3)));
        }
        entries.push(entry("end", say("status is set in src/f3.ts.")));
        PassInput { entries, ..PassInput::default() }
    }

    /// Answers that keep the chunks whose text contains `needle`.
    pub(crate) fn answer_keeping(plan: &Plan, needle: &str) -> PassAnswers {
        let outcomes = plan
            .requests
            .iter()
            .map(|r| {
                let v = serde_json::to_value(r).unwrap();
                let chunks = v["state"]["chunks"].as_object().unwrap().clone();
                let mut answers = serde_json::Map::new();
                answers.insert("keep_whole".into(), json!({"type": "bool", "probability": 0.1}));
                let mut focus = "none".to_string();
                for (k, t) in &chunks {
                    let hit = t.as_str().unwrap().contains(needle);
                    if hit {
                        focus = k.clone();
                    }
                    answers.insert(k.clone(), json!({"type": "bool", "probability": if hit { 0.9 } else { 0.05 }}));
                }
                answers.insert(
                    "focus".into(),
                    json!({"type": "choice", "choice": focus, "probabilities": {focus.clone(): 0.8}, "confidence": 0.8}),
                );
                RequestOutcome::Answered { answers: Value::Object(answers).into(), input_tokens: 1000.0, cost_usd: 0.0002 }
            })
            .collect();
        PassAnswers { outcomes, timed_out: false, ms: 812.0 }
    }

    /// Answers every bool question of whole-item requests with `p(key)`.
    pub(crate) fn answer_items(plan: &Plan, p: impl Fn(&str) -> f64) -> PassAnswers {
        let outcomes = plan
            .requests
            .iter()
            .map(|r| {
                let v = serde_json::to_value(r).unwrap();
                let mut answers = serde_json::Map::new();
                for k in v["questions"].as_object().unwrap().keys() {
                    answers.insert(k.clone(), json!({"type": "bool", "probability": p(k)}));
                }
                RequestOutcome::Answered { answers: Value::Object(answers).into(), input_tokens: 10.0, cost_usd: 0.0 }
            })
            .collect();
        PassAnswers { outcomes, timed_out: false, ms: 5.0 }
    }

    pub(super) fn whole_session() -> Vec<ContextEntry> {
        use crate::testing::{png_b64, shot};
        let mut e = Vec::new();
        for n in 0..4 {
            e.push(entry(&format!("u{n}"), user(&format!("old task {n} 日本😀"))));
            e.push(entry(&format!("a{n}"), call(&format!("c{n}"), "bash", json!({"command": format!("cat f{n}")}))));
            e.push(entry(&format!("r{n}"), result(&format!("c{n}"), "bash", &"old ".repeat(1000))));
            e.push(entry(&format!("s{n}"), say("done")));
        }
        e.push(entry("u", user("check the screenshot and the log")));
        e.push(entry("ai", call("c-shot", "read", json!({"path": "shot.png"}))));
        e.push(shot("shot", "Read image file [image/png]", &png_b64(1280, 960)));
        e.push(entry("al", call("cl", "bash", json!({"command": "cat log"}))));
        e.push(entry("rl", result("cl", "bash", &"log line 😀\n".repeat(60))));
        e.push(entry("m1", say("one")));
        e.push(entry("m2", say("two")));
        e.push(entry("end", say("The log is fine.")));
        e
    }

    #[test]
    fn a_grep_output_is_distilled_to_the_needed_file() {
        let text = grep_text(200);
        let inp = input(&[("bash", "", json!({"command": "rg -n status"}), text.clone())]);
        let p = plan(&inp);
        assert_eq!(p.pass.skipped, None);
        assert_eq!(p.pass.outputs.len(), 1);
        assert!(p.pass.outputs[0].grep);
        assert!(!p.requests.is_empty());
        assert_eq!(p.pass.requests, p.requests.len());

        let out = finish(&p.pass, &answer_keeping(&p, "src/f3.ts:"));
        assert_eq!(out.entries.len(), 2);
        let edit = serde_json::to_value(&out.entries[0]).unwrap();
        assert_eq!(edit["type"], "context_edit");
        assert_eq!(edit["targetId"], "r0");
        let replaced = edit["replacement"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(edit["replacement"]["content"][0]["type"], "text");
        assert!(replaced.starts_with("[context-guard] Distilled the output of bash `rg -n status`: kept "));
        assert!(replaced.contains("src/f3.ts:1:  status = 0 日本 😀"));
        assert!(replaced.contains("omitted from src/f0.ts"));

        let rec = serde_json::to_value(&out.entries[1]).unwrap();
        assert_eq!(rec["type"], "custom");
        assert_eq!(rec["customType"], "context-guard");
        let data = &rec["data"];
        assert_eq!(data["v"], 1);
        assert_eq!(data["phase"], "run-end");
        assert_eq!(data["model"], "openrouter/~typesafe/jev-latest");
        assert_eq!(data["requests"], p.requests.len());
        assert_eq!(data["inputTokens"], 1000.0 * p.requests.len() as f64);
        assert_eq!(data["ms"], 812.0);
        assert_eq!(data["timedOut"], false);
        let r0 = &data["results"][0];
        assert_eq!(r0["kind"], "large");
        assert_eq!(r0["outcome"], "distilled");
        assert_eq!(r0["entryId"], "r0");
        assert_eq!(r0["tool"], "bash");
        assert_eq!(r0["label"], "bash `rg -n status`");
        assert_eq!(r0["beforeChars"], crate::text::js_len(&text));
        assert_eq!(r0["afterChars"], crate::text::js_len(replaced));
        assert!(r0["jev"].as_str().unwrap().starts_with("kw.10 focus=chunk_"));
        assert!(r0.get("omitted").is_none());
        assert_eq!(out.saved_chars, crate::text::js_len(&text) - crate::text::js_len(replaced));
        assert_eq!(data["savedChars"], out.saved_chars);
    }

    #[test]
    fn skips_say_why() {
        let mut inp = input(&[("bash", "", json!({"command": "x"}), "small".to_string())]);
        assert_eq!(plan(&inp).pass.skipped, Some(Skip::NoLargeOutputs));
        inp.settings.enabled = false;
        assert_eq!(plan(&inp).pass.skipped, Some(Skip::Off));
        let inp = input(&[("bash", "", json!({"command": "x"}), "x\n".repeat(2500))]);
        assert_eq!(plan(&inp).pass.skipped, Some(Skip::BelowMinRunChars));
        assert_eq!(plan(&PassInput::default()).pass.skipped, Some(Skip::NoRun));
        // Nothing asked: no record.
        let out = finish(&plan(&inp).pass, &PassAnswers::default());
        assert!(out.entries.is_empty() && out.record.is_none());
    }

    /// A skip crosses as `as_str` (the `skipped` getter), its TypeScript type is serde's names: the same.
    #[test]
    fn a_skip_crosses_as_its_serde_name() {
        use Skip::*;
        let all = [
            Off,
            NoRun,
            NoLargeOutputs,
            BelowMinRunChars,
            NoClassifier,
            MidRunOff,
            NothingEligible,
            BelowBatch,
            NotPayingOff,
            EarlyInRun,
            JudgeNotWorthIt,
            CacheWarm,
        ];
        for s in all {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
    }

    #[test]
    fn oversize_chunks_are_never_sent_and_kept() {
        let long_line = "z".repeat(33_000);
        let text = format!("{}\n{long_line}\n{}", "a\n".repeat(15_000), "b\n".repeat(15_000));
        let inp = input(&[("bash", "", json!({"command": "cat x"}), text)]);
        let p = plan(&inp);
        let o = &p.pass.outputs[0];
        let oversize: Vec<&PlannedSegment> = o.segments.iter().filter(|s| s.segment.oversize).collect();
        assert_eq!(oversize.len(), 1);
        assert!(oversize[0].request.is_none());
        for r in &p.requests {
            assert!(!serde_json::to_string(r).unwrap().contains(&long_line));
        }
        let out = finish(&p.pass, &answer_keeping(&p, "nothing matches this"));
        let rec = out.record.unwrap();
        assert_eq!(rec.results[0].outcome, ResultOutcome::Distilled);
        assert!(rec.results[0].reason.contains("oversize"), "{}", rec.results[0].reason);
        assert!(rec.results[0].jev.contains("oversize"));
        let Draft::ContextEdit { replacement: Some(replacement), .. } = &out.entries[0] else { panic!("no edit") };
        assert!(replacement.content[0].text.contains(&long_line));
    }

    #[test]
    fn read_outputs_number_omissions_by_file_line() {
        let text: String = (0..400).map(|i| format!("fn line_{i}() {{ {} }}\n", "x".repeat(30))).collect();
        let inp = input(&[("read", "", json!({"path": "src/a.rs", "offset": 101}), text)]);
        let p = plan(&inp);
        assert_eq!(p.pass.outputs[0].numbering(), Numbering::File { offset: 101 });
        let out = finish(&p.pass, &answer_keeping(&p, "fn line_200()"));
        let Draft::ContextEdit { replacement: Some(replacement), .. } = &out.entries[0] else { panic!("no edit") };
        let text = &replacement.content[0].text;
        assert!(text.contains("[… file lines 101-"), "{text}");
        assert!(text.starts_with("[context-guard] Distilled the output of read `src/a.rs` from line 101: kept "));
    }

    #[test]
    fn whole_items_small_exchanges_and_images_in_one_pass() {
        let mut inp = PassInput { entries: whole_session(), ..PassInput::default() };
        inp.settings.exchange_break_even = false;
        let p = plan(&inp);
        assert_eq!(p.pass.small.len(), 1);
        assert_eq!(p.pass.exchanges.len(), 2, "u2 and u3 are the recent two");
        assert_eq!(p.pass.images.len(), 1);
        assert_eq!(p.requests.len(), 2, "one batch of small outputs, one of exchanges");
        // Written by the fast writer as serde_json writes them, every kind.
        assert_eq!(crate::wire::requests(&p.requests, &[]), serde_json::to_string(&p.requests).unwrap());
        let out = finish(&p.pass, &answer_items(&p, |k| if k == "exchange_2" { 0.9 } else { 0.05 }));
        let v = serde_json::to_value(&out.entries).unwrap();
        let edits: Vec<&Value> = v.as_array().unwrap().iter().filter(|e| e["type"] == "context_edit").collect();
        let target = |id: &str| edits.iter().find(|e| e["targetId"] == id).copied();
        assert!(target("rl").unwrap()["replacement"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("[context-guard] Omitted the output of bash `cat log`"));
        assert!(target("u0").unwrap()["replacement"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("[context-guard] Omitted an earlier exchange judged unrelated"));
        for id in ["a0", "r0", "s0"] {
            assert_eq!(target(id).unwrap()["replacement"], Value::Null, "{id}");
        }
        assert!(target("u1").is_none(), "exchange_2 is related");
        let shot = target("shot").unwrap();
        assert_eq!(shot["replacement"]["content"][1]["text"], "Read image file [image/png]");
        let rec = out.record.unwrap();
        let kinds: Vec<(ResultKind, ResultOutcome)> = rec.results.iter().map(|r| (r.kind, r.outcome)).collect();
        assert_eq!(
            kinds,
            [
                (ResultKind::Small, ResultOutcome::Removed),
                (ResultKind::Exchange, ResultOutcome::Removed),
                (ResultKind::Exchange, ResultOutcome::Kept),
                (ResultKind::Image, ResultOutcome::Removed),
            ]
        );
        assert_eq!(rec.results[1].omitted, ["u0", "a0", "r0", "s0"]);
        assert_eq!(rec.results[1].jev, "p.05");
        assert_eq!(rec.saved_chars, out.saved_chars);
        assert_eq!(rec.saved_chars, rec.results.iter().map(|r| r.before_chars - r.after_chars).sum::<usize>());
        // The JSON form writes `replacement: null`, byte for byte as serde_json.
        let planned = plan_json(&serde_json::to_vec(&inp).unwrap(), &[], &[]).unwrap();
        let answers = answer_items(&p, |k| if k == "exchange_2" { 0.9 } else { 0.05 });
        let text = finish_json(&planned.state, &serde_json::to_vec(&answers).unwrap()).unwrap();
        assert_eq!(text, serde_json::to_string(&finish(&p.pass, &answers)).unwrap());
    }
}
