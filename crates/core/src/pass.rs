//! The run-end pass for large outputs, as two pure steps around the
//! classifier (guard.md §1, §3, §5, §6).
//!
//! For: `plan` (entries and settings in; the classifier requests and a
//! serializable pass state out) and `finish` (the pass state and how each
//! request ended in; the `context_edit` drafts and the record out). The
//! extension runs the requests in between (limiter, time budget, retries) and
//! appends the drafts. Not for: I/O, timing or the rules of each step (those
//! live in `span`, `chunk`, `decide` and `render`).
//!
//! Whole items (§4) and mid-run checkpoints (§7) slot in as more request
//! kinds in the plan and more result kinds in the record: `Phase` and
//! `ResultKind` already name them.
//!
//! The pass state goes to JavaScript and comes back: everything `finish`
//! reads is in it, and an altered one cannot make `finish` panic (ranges are
//! checked; a chunk that does not fit keeps its output, reason `bad-plan`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chunk::{chunk, chunk_text, segments, Chunk, Segment};
use crate::decide::{
    decide_result, interpret, large_request, ClassifierContext, Outcome as ResultOutcome, Reason, RequestInput,
    RequestOutcome, ResultInput, Verdict,
};
use crate::entry::ContextEntry;
use crate::read::Fields;
use crate::render::{file_offset, tool_label, Numbering};
use crate::settings::Settings;
use crate::span::{find_run, large_outputs};

/// The record's `customType` (seed 001's, so `/guard` reads old records too).
pub const RECORD_TYPE: &str = "context-guard";
/// The record's version.
pub const RECORD_VERSION: u32 = 1;

/// What the pass reads.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassInput {
    /// `event.context.contextEntries` as plain data (see `entry`).
    pub entries: Vec<ContextEntry>,
    pub settings: Settings,
}

/// When a pass runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    #[default]
    RunEnd,
    MidRun,
}

/// Why a pass has nothing to ask.
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
}

impl Skip {
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::Off => "off",
            Skip::NoRun => "no-run",
            Skip::NoLargeOutputs => "no-large-outputs",
            Skip::BelowMinRunChars => "below-min-run-chars",
        }
    }
}

/// The classifier requests of a pass and the state `finish` needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// Pi `ClassifierContext`s, to send as they are. Their index is their id:
    /// `finish` takes one outcome per request, in this order.
    pub requests: Vec<ClassifierContext>,
    pub pass: PassState,
}

/// Everything `finish` reads (serializable both ways).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassState {
    pub phase: Phase,
    pub settings: Settings,
    pub skipped: Option<Skip>,
    /// How many requests the plan holds.
    pub requests: usize,
    /// The run's final answer (for `keepCitedFiles`).
    pub answer: String,
    pub outputs: Vec<PlannedOutput>,
}

/// One large output, cut and assigned to requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
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
}

impl PlannedOutput {
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
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

/// What the pass appends: `{ entries: [...event.entries, ...outcome.entries] }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// The `context_edit` drafts, then the record when the pass made a request.
    pub entries: Vec<Draft>,
    /// The record's data (also the last of `entries`), for the status bar.
    pub record: Option<Record>,
    /// Characters the edits keep out of the context.
    pub saved_chars: usize,
}

/// A session entry draft Pi appends (`SessionBoundaryDraft`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum Draft {
    #[serde(rename = "context_edit", rename_all = "camelCase")]
    ContextEdit { target_id: String, replacement: Replacement },
    #[serde(rename = "custom", rename_all = "camelCase")]
    Custom { custom_type: String, data: Record },
}

/// A replacement's content: one text block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replacement {
    pub content: Vec<TextBlock>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextBlock {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: String,
}

/// The record of a pass (§6), `data` of `{ customType: "context-guard" }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub v: u32,
    pub phase: Phase,
    pub model: String,
    pub saved_chars: usize,
    pub requests: usize,
    pub input_tokens: f64,
    pub cost_usd: f64,
    pub ms: f64,
    pub timed_out: bool,
    pub results: Vec<ResultRecord>,
}

/// What kind of item a result is (§6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultKind {
    Large,
    Small,
    Exchange,
    Image,
}

/// One item's result in a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultRecord {
    pub kind: ResultKind,
    pub entry_id: String,
    pub tool: String,
    pub label: String,
    pub outcome: ResultOutcome,
    pub reason: String,
    pub before_chars: usize,
    pub after_chars: usize,
    /// The classifier trace, such as `kw.15 focus=chunk_4:.52 keep 9/29`.
    pub jev: String,
    /// Entry ids an exchange omission covers (§4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<String>,
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
        }
    }
}

impl PassState {
    pub fn from_value(v: Value) -> PassState {
        let mut f = Fields::of(v);
        PassState {
            phase: if f.opt_string("phase").as_deref() == Some("mid-run") { Phase::MidRun } else { Phase::RunEnd },
            settings: match f.take("settings") {
                Value::Object(map) => crate::settings::parse_object(&map),
                _ => Settings::default(),
            },
            // Only a plan with something to ask is finished; the reason is
            // not read back.
            skipped: None,
            requests: f.count("requests"),
            answer: f.string("answer"),
            outputs: f.list("outputs", PlannedOutput::from_value),
        }
    }
}

impl PlannedOutput {
    pub fn from_value(v: Value) -> PlannedOutput {
        let mut f = Fields::of(v);
        PlannedOutput {
            entry_id: f.string("entryId"),
            tool: f.string("tool"),
            label: f.string("label"),
            is_error: f.boolean("isError"),
            text: f.string("text"),
            chars: f.count("chars"),
            lines: f.count("lines"),
            grep: f.boolean("grep"),
            file_offset: f.opt_count("fileOffset"),
            chunks: f.list("chunks", Chunk::from_value),
            segments: f.list("segments", PlannedSegment::from_value),
        }
    }
}

impl PlannedSegment {
    pub fn from_value(v: Value) -> PlannedSegment {
        let mut f = Fields::of(v);
        PlannedSegment { segment: Segment::from_value(f.take("segment")), request: f.opt_count("request") }
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

crate::deserialize_via_value!(PassInput, PassState, PlannedOutput, PlannedSegment, PassAnswers);

fn skipped(settings: &Settings, why: Skip) -> Plan {
    Plan {
        requests: Vec::new(),
        pass: PassState { settings: settings.clone(), skipped: Some(why), ..PassState::default() },
    }
}

/// Step one: the run, its large outputs, their chunks and segments, and one
/// classifier request per segment that may be sent.
pub fn plan(input: &PassInput) -> Plan {
    let s = &input.settings;
    if !s.enabled {
        return skipped(s, Skip::Off);
    }
    let Some(run) = find_run(&input.entries, s) else {
        return skipped(s, Skip::NoRun);
    };
    let large = large_outputs(&input.entries, &run, s);
    if large.total_chars == 0 {
        return skipped(s, Skip::NoLargeOutputs);
    }
    if large.below_min_run {
        return skipped(s, Skip::BelowMinRunChars);
    }

    let mut requests = Vec::new();
    let mut outputs = Vec::with_capacity(large.outputs.len());
    for o in &large.outputs {
        let chunked = chunk(&o.text);
        let segs = segments(&chunked.chunks, s.max_segment_chars, s.max_chunks_per_segment);
        // The chunks cover the output: their lines are its lines.
        let lines = chunked.chunks.iter().map(|c| c.lines).sum();
        let parts = segs.iter().filter(|g| !g.oversize).count();
        let mut planned = Vec::with_capacity(segs.len());
        let mut part = 0;
        for seg in segs {
            if seg.oversize {
                planned.push(PlannedSegment { segment: seg, request: None });
                continue;
            }
            part += 1;
            let part_chunks = chunked.chunks.get(seg.first..seg.first.saturating_add(seg.count)).unwrap_or(&[]);
            let texts: Vec<&str> = part_chunks.iter().map(|c| chunk_text(&o.text, c).unwrap_or("")).collect();
            requests.push(large_request(&RequestInput {
                run: &run,
                tool: &o.tool,
                arguments: &o.arguments,
                is_error: o.is_error,
                lines,
                part,
                parts,
                first_number: seg.first + 1,
                chunk_texts: &texts,
            }));
            planned.push(PlannedSegment { segment: seg, request: Some(requests.len() - 1) });
        }
        outputs.push(PlannedOutput {
            entry_id: o.entry_id.clone(),
            tool: o.tool.clone(),
            label: tool_label(&o.tool, &o.arguments),
            is_error: o.is_error,
            text: o.text.clone(),
            chars: o.chars,
            lines,
            grep: chunked.grep,
            file_offset: file_offset(&o.tool, &o.arguments),
            chunks: chunked.chunks,
            segments: planned,
        });
    }
    let count = requests.len();
    Plan {
        requests,
        pass: PassState {
            phase: Phase::RunEnd,
            settings: s.clone(),
            skipped: None,
            requests: count,
            answer: run.answer,
            outputs,
        },
    }
}

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

/// Step two: each segment's verdict, each output's decision, the drafts and
/// the record.
pub fn finish(pass: &PassState, answers: &PassAnswers) -> Outcome {
    let s = &pass.settings;
    let missing = if answers.timed_out {
        RequestOutcome::Timeout
    } else {
        RequestOutcome::Error { message: "no outcome for this request".to_string() }
    };
    let mut edits = Vec::new();
    let mut results = Vec::with_capacity(pass.outputs.len());
    let mut saved = 0usize;
    for o in &pass.outputs {
        if !covers(o) {
            // A state that came back altered: keep the output, say why.
            results.push(ResultRecord {
                kind: ResultKind::Large,
                entry_id: o.entry_id.clone(),
                tool: o.tool.clone(),
                label: o.label.clone(),
                outcome: ResultOutcome::Kept,
                reason: Reason::BadPlan.as_str().to_string(),
                before_chars: o.chars,
                after_chars: o.chars,
                jev: String::new(),
                omitted: Vec::new(),
            });
            continue;
        }
        let verdicts: Vec<(Segment, Verdict)> = o
            .segments
            .iter()
            .map(|p| {
                let mut seg = p.segment;
                // A state that came back altered cannot ask for more chunks than there are.
                seg.count = seg.count.min(o.chunks.len().saturating_sub(seg.first));
                let verdict = match p.request {
                    Some(i) if !seg.oversize => interpret(
                        answers.outcomes.get(i).unwrap_or(&missing),
                        seg.first.saturating_add(1),
                        seg.count,
                        s,
                    ),
                    _ => Verdict::all(seg.count, Reason::Oversize, "oversize".to_string()),
                };
                (seg, verdict)
            })
            .collect();
        let decision = decide_result(
            &ResultInput {
                text: &o.text,
                chunks: &o.chunks,
                grep: o.grep,
                segments: &verdicts,
                answer: &pass.answer,
                label: &o.label,
                entry_id: &o.entry_id,
                numbering: o.numbering(),
                lines: o.lines,
                chars: o.chars,
            },
            s,
        );
        if let Some(text) = decision.replacement {
            saved = saved.saturating_add(o.chars.saturating_sub(decision.after_chars));
            edits.push(Draft::ContextEdit {
                target_id: o.entry_id.clone(),
                replacement: Replacement { content: vec![TextBlock { kind: "text", text }] },
            });
        }
        results.push(ResultRecord {
            kind: ResultKind::Large,
            entry_id: o.entry_id.clone(),
            tool: o.tool.clone(),
            label: o.label.clone(),
            outcome: decision.outcome,
            reason: decision.reason,
            before_chars: o.chars,
            after_chars: decision.after_chars,
            jev: decision.trace,
            omitted: Vec::new(),
        });
    }
    let requests = pass.requests;
    let (input_tokens, cost_usd) = answers
        .outcomes
        .iter()
        .take(requests)
        .map(RequestOutcome::usage)
        .fold((0.0, 0.0), |(t, c), (dt, dc)| (t + dt, c + dc));
    let timed_out =
        answers.timed_out || answers.outcomes.iter().take(requests).any(|o| matches!(o, RequestOutcome::Timeout));
    let record = (requests > 0).then(|| Record {
        v: RECORD_VERSION,
        phase: pass.phase,
        model: s.model.clone(),
        saved_chars: saved,
        requests,
        input_tokens,
        cost_usd,
        ms: if answers.ms.is_finite() && answers.ms > 0.0 { answers.ms } else { 0.0 },
        timed_out,
        results,
    });
    let mut entries = edits;
    if let Some(r) = &record {
        entries.push(Draft::Custom { custom_type: RECORD_TYPE.to_string(), data: r.clone() });
    }
    Outcome { entries, record, saved_chars: saved }
}

/// [`plan`] over JSON: `PassInput` (UTF-8 JSON bytes) in; the JSON text of
/// the requests (`ClassifierContext[]`) and the pass state out, apart, so the
/// extension parses only the requests and hands the state back to
/// [`finish_json`] as the bytes it got. This is the form the extension calls:
/// one `JSON.stringify` and one `JSON.parse` cost less than converting
/// thousands of objects field by field across the wasm boundary (the
/// `/context` report does the same), and bytes cross as a copy, not through a
/// JavaScript string.
///
/// The state is a JSON header, a newline, then the output texts raw, one
/// after another (the header gives their byte lengths): a megabyte is neither
/// escaped here nor unescaped in `finish_json` (see `json`).
pub fn plan_json(input: &[u8]) -> Result<(String, Vec<u8>, Option<Skip>), String> {
    let input: PassInput = serde_json::from_str(utf8(input)?).map_err(|e| format!("pass input: {e}"))?;
    let mut plan = plan(&input);
    let requests = crate::json::requests(&plan.requests);
    let texts: Vec<String> = plan.pass.outputs.iter_mut().map(|o| std::mem::take(&mut o.text)).collect();
    let header = StateHeader { state: &plan.pass, text_bytes: texts.iter().map(String::len).collect() };
    let mut state = serde_json::to_vec(&header).map_err(|e| format!("pass state: {e}"))?;
    state.push(b'\n');
    for t in &texts {
        state.extend_from_slice(t.as_bytes());
    }
    Ok((requests, state, plan.pass.skipped))
}

/// The JSON part of the pass state bytes.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StateHeader<'a> {
    state: &'a PassState,
    text_bytes: Vec<usize>,
}

/// Bytes as text, checked. Read through `from_str` like every other JSON in
/// the core, so the wasm carries one JSON reader, not one per input kind.
fn utf8(bytes: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))
}

/// The pass state from the bytes [`plan_json`] gave. A text that does not
/// fit reads as empty, so its output keeps (`bad-plan`).
pub fn read_state(bytes: &[u8]) -> Result<PassState, String> {
    let split = bytes.iter().position(|&b| b == b'\n').unwrap_or(bytes.len());
    let (head, rest) = bytes.split_at(split);
    let mut header = Fields::of(serde_json::from_str(utf8(head)?).map_err(|e| format!("pass state: {e}"))?);
    let lengths = header.list("textBytes", |v| v.as_u64().and_then(|n| usize::try_from(n).ok()).unwrap_or(0));
    let mut state = PassState::from_value(header.take("state"));
    let mut texts = rest.get(1..).unwrap_or(&[]);
    for (o, len) in state.outputs.iter_mut().zip(lengths) {
        let (text, after) = texts.split_at(len.min(texts.len()));
        o.text = std::str::from_utf8(text).map(str::to_string).unwrap_or_default();
        texts = after;
    }
    Ok(state)
}

/// [`finish`] over JSON: the pass state bytes [`plan_json`] gave and the
/// runner's result (UTF-8 JSON) in, `Outcome` as JSON text out.
pub fn finish_json(pass: &[u8], answers: &[u8]) -> Result<String, String> {
    let pass = read_state(pass)?;
    let answers: PassAnswers = serde_json::from_str(utf8(answers)?).map_err(|e| format!("pass answers: {e}"))?;
    crate::json::outcome(&finish(&pass, &answers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::tests::{call, entry, result, say, user};
    use serde_json::{json, Value};

    fn grep_text(files: usize) -> String {
        let mut s = String::new();
        for f in 0..files {
            for m in 0..4 {
                s.push_str(&format!("src/f{f}.ts:{}:  status = {m} 日本 😀\n", m * 7 + 1));
            }
        }
        s
    }

    fn input(outputs: &[(&str, &str, Value, String)]) -> PassInput {
        let mut entries = vec![entry("u0", user("earlier")), entry("a0", say("earlier answer"))];
        entries.push(entry("u", user("where is status set?")));
        for (i, (tool, _, args, _)) in outputs.iter().enumerate() {
            entries.push(entry(&format!("a{i}"), call(&format!("c{i}"), tool, args.clone())));
            entries.push(entry(&format!("r{i}"), result(&format!("c{i}"), tool, &outputs[i].3)));
        }
        entries.push(entry("end", say("status is set in src/f3.ts.")));
        PassInput { entries, settings: Settings::default() }
    }

    /// Answers that keep the chunks whose text contains `needle`.
    fn answer_keeping(plan: &Plan, needle: &str) -> PassAnswers {
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
                RequestOutcome::Answered { answers: Value::Object(answers), input_tokens: 1000.0, cost_usd: 0.0002 }
            })
            .collect();
        PassAnswers { outcomes, timed_out: false, ms: 812.0 }
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

        // The state crosses to JS and back unchanged.
        let back: PassState = serde_json::from_str(&serde_json::to_string(&p.pass).unwrap()).unwrap();
        assert_eq!(back, p.pass);

        let out = finish(&back, &answer_keeping(&p, "src/f3.ts:"));
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
    fn the_json_forms_round_trip_the_state_with_raw_texts() {
        let text = format!("{}\n\"quoted\" 日本 😀\n", grep_text(100));
        let inp = input(&[("bash", "", json!({"command": "rg -n status"}), text)]);
        let bytes = serde_json::to_vec(&inp).unwrap();
        let (requests, state, skipped) = plan_json(&bytes).unwrap();
        assert_eq!(skipped, None);
        let p = plan(&inp);
        assert_eq!(requests, serde_json::to_string(&p.requests).unwrap());
        assert_eq!(read_state(&state).unwrap(), p.pass);
        let answers = serde_json::to_vec(&answer_keeping(&p, "src/f3.ts:")).unwrap();
        let text = finish_json(&state, &answers).unwrap();
        let finished = finish(&p.pass, &answer_keeping(&p, "src/f3.ts:"));
        assert_eq!(text, serde_json::to_string(&finished).unwrap(), "the fast writer writes what serde_json writes");
        let out: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(out["entries"][0]["type"], "context_edit");
        // Cut or garbled state bytes never panic; the outputs keep.
        for cut in [0, 1, state.len() / 2, state.len() - 1] {
            if let Ok(s) = read_state(&state[..cut]) {
                let o = finish(&s, &answer_keeping(&p, "src/f3.ts:"));
                assert!(o.entries.iter().all(|e| !matches!(e, Draft::ContextEdit { .. })));
            }
        }
        assert!(finish_json(b"\xff", &answers).is_err());
    }

    #[test]
    fn failures_and_timeouts_keep_everything() {
        let inp = input(&[("bash", "", json!({"command": "rg -n status"}), grep_text(200))]);
        let p = plan(&inp);
        let out = finish(&p.pass, &PassAnswers { outcomes: vec![], timed_out: true, ms: 8000.0 });
        assert_eq!(out.entries.len(), 1, "only the record");
        let rec = out.record.unwrap();
        assert!(rec.timed_out);
        assert_eq!(rec.results[0].outcome, ResultOutcome::Kept);
        assert_eq!(rec.results[0].reason, "timeout");
        let errors = vec![RequestOutcome::Error { message: "500".into() }; p.requests.len()];
        let out = finish(&p.pass, &PassAnswers { outcomes: errors, timed_out: false, ms: 1.0 });
        assert_eq!(out.record.unwrap().results[0].reason, "error");
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
        let Draft::ContextEdit { replacement, .. } = &out.entries[0] else { panic!("no edit") };
        assert!(replacement.content[0].text.contains(&long_line));
    }

    #[test]
    fn read_outputs_number_omissions_by_file_line() {
        let text: String = (0..400).map(|i| format!("fn line_{i}() {{ {} }}\n", "x".repeat(30))).collect();
        let inp = input(&[("read", "", json!({"path": "src/a.rs", "offset": 101}), text)]);
        let p = plan(&inp);
        assert_eq!(p.pass.outputs[0].numbering(), Numbering::File { offset: 101 });
        let out = finish(&p.pass, &answer_keeping(&p, "fn line_200()"));
        let Draft::ContextEdit { replacement, .. } = &out.entries[0] else { panic!("no edit") };
        let text = &replacement.content[0].text;
        assert!(text.contains("[… file lines 101-"), "{text}");
        assert!(text.starts_with("[context-guard] Distilled the output of read `src/a.rs` from line 101: kept "));
    }

    #[test]
    fn an_altered_state_keeps_the_output() {
        let inp = input(&[("bash", "", json!({"command": "rg -n status"}), grep_text(200))]);
        let p = plan(&inp);
        let answers = answer_keeping(&p, "src/f3.ts:");
        let mut bad = p.pass.clone();
        let past_end = bad.outputs[0].text.len() + 10;
        for c in &mut bad.outputs[0].chunks {
            c.end = past_end;
        }
        let out = finish(&bad, &answers);
        assert_eq!(out.record.unwrap().results[0].reason, "bad-plan");
        let mut bad = p.pass.clone();
        bad.outputs[0].segments[0].segment.first = usize::MAX;
        bad.outputs[0].segments[0].request = Some(usize::MAX);
        let _ = finish(&bad, &answers);
        bad.outputs[0].chunks.clear();
        let _ = finish(&bad, &answers);
    }
}
