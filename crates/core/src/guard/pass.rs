//! The run-end pass for large outputs, as two pure steps around the
//! classifier (guard.md §1, §3, §5, §6).
//!
//! For: `plan` (entries and settings in; the classifier requests and the
//! pass state out) and `finish` (the pass state and how each
//! request ended in; the `context_edit` drafts and the record out). The
//! extension runs the requests in between (limiter, time budget, retries) and
//! appends the drafts. Not for: I/O, timing or the rules of each step (those
//! live in `span`, `chunk`, `decide` and `render`).
//!
//! Whole items (§4: `items`, `exchange`, `images`) are more requests in the
//! same plan, run by the same limiter, and more results in the same record.
//! Mid-run checkpoints (§7) will slot in the same way: `Phase` names them.
//!
//! The pass state is everything `finish` reads. It stays inside the wasm
//! module between the two steps (the extension holds a handle, see
//! `plan_json`), and still an altered one cannot make `finish` panic (ranges
//! are checked; a chunk that does not fit keeps its output, reason
//! `bad-plan`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::entry::ContextEntry;
use crate::guard::chunk::{chunk, chunk_text, segments, Chunk, Segment};
use crate::guard::classify::{ClassifierContext, RequestOutcome};
use crate::guard::decide::{
    decide_result, interpret, large_request, Outcome as ResultOutcome, Reason, RequestInput, ResultInput, Verdict,
};
use crate::guard::exchange::PlannedExchange;
use crate::guard::images::ImageEdit;
use crate::guard::items::PlannedSmall;
use crate::guard::json::ChunkRefs;
use crate::guard::outcome::{
    Draft, Outcome, Phase, Record, Replacement, ResultKind, ResultRecord, TextBlock, TextRange, RECORD_TYPE,
    RECORD_VERSION,
};
use crate::guard::render::{file_offset, tool_label, Numbering};
use crate::guard::settings::Settings;
use crate::guard::span::{find_run, large_of, run_outputs};
use crate::read::Fields;

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
}

impl Default for PassInput {
    fn default() -> Self {
        PassInput { entries: Vec::new(), settings: Settings::default(), classifier: true }
    }
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
    /// No classifier, and no old image to remove.
    NoClassifier,
}

impl Skip {
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::Off => "off",
            Skip::NoRun => "no-run",
            Skip::NoLargeOutputs => "no-large-outputs",
            Skip::BelowMinRunChars => "below-min-run-chars",
            Skip::NoClassifier => "no-classifier",
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
    pub images: Vec<ImageEdit>,
    /// Provider requests the session has had so far (assistant messages).
    pub requests_so_far: usize,
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
                Value::Object(map) => crate::guard::settings::parse_object(&map),
                _ => Settings::default(),
            },
            classifier: !matches!(f.take("classifier"), Value::Bool(false)),
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

fn skipped(settings: &Settings, why: Skip) -> Plan {
    Plan {
        requests: Vec::new(),
        pass: PassState { settings: settings.clone(), skipped: Some(why), ..PassState::default() },
    }
}

/// Context characters from each entry to the end: the part of the prompt
/// cache an edit of that entry rewrites.
fn suffix_chars(entries: &[ContextEntry]) -> Vec<usize> {
    let mut out = vec![0usize; entries.len()];
    let mut sum = 0usize;
    for (i, e) in entries.iter().enumerate().rev() {
        sum = sum.saturating_add(e.messages.iter().map(crate::size::message_chars).sum());
        if let Some(slot) = out.get_mut(i) {
            *slot = sum;
        }
    }
    out
}

/// Step one: the run; its large outputs, their chunks and segments and one
/// classifier request per segment that may be sent; its small outputs and
/// the old exchanges, batched as whole items; and the old images, which need
/// no request. Without a classifier only the images.
pub fn plan(input: &PassInput) -> Plan {
    let s = &input.settings;
    if !s.enabled {
        return skipped(s, Skip::Off);
    }
    let entries = &input.entries;
    let Some(run) = find_run(entries, s) else {
        return skipped(s, Skip::NoRun);
    };
    let suffix = suffix_chars(entries);
    let rewrite = |i: usize| suffix.get(i).copied().unwrap_or(0);
    let index_of = |id: &str| entries.iter().position(|e| e.id == id).unwrap_or(0);
    let mut images = crate::guard::images::old_images(entries, s.image_keep_turns);
    for im in &mut images {
        im.rewrite_chars = rewrite(index_of(&im.entry_id));
    }
    let requests_so_far =
        entries.iter().filter(|e| matches!(e.messages.first(), Some(crate::entry::Message::Assistant { .. }))).count();

    let mut requests = Vec::new();
    let mut outputs = Vec::new();
    let mut large_rewrite = Vec::new();
    let mut small = Vec::new();
    let mut exchanges = Vec::new();
    let mut large_skip = None;
    if input.classifier {
        // Read once for both sizes: each candidate holds its output's text.
        let (large, small_candidates): (Vec<_>, Vec<_>) =
            run_outputs(entries, &run, s).into_iter().partition(|o| o.chars >= s.min_result_chars);
        let large = large_of(large, s);
        if large.total_chars == 0 {
            large_skip = Some(Skip::NoLargeOutputs);
        } else if large.below_min_run {
            large_skip = Some(Skip::BelowMinRunChars);
        }
        for o in large.outputs {
            large_rewrite.push(rewrite(o.entry_index));
            outputs.push(plan_large(o, &run, s, &mut requests));
        }
        plan_small(small_candidates, entries, &run, s, &rewrite, &mut requests, &mut small);
        plan_exchanges(entries, &run, s, &rewrite, &mut requests, &mut exchanges);
    } else {
        large_skip = Some(Skip::NoClassifier);
    }
    if requests.is_empty() && images.is_empty() {
        return skipped(s, large_skip.unwrap_or(Skip::NoLargeOutputs));
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
            large_rewrite,
            small,
            exchanges,
            images,
            requests_so_far,
        },
    }
}

/// One large output cut into chunks and segments, one request per sendable segment.
fn plan_large(
    o: crate::guard::span::Output,
    run: &crate::guard::span::Run,
    s: &Settings,
    requests: &mut Vec<ClassifierContext>,
) -> PlannedOutput {
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
            run,
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
    PlannedOutput {
        entry_id: o.entry_id.clone(),
        tool: o.tool.clone(),
        label: tool_label(&o.tool, &o.arguments),
        is_error: o.is_error,
        text: o.text,
        chars: o.chars,
        lines,
        grep: chunked.grep,
        file_offset: file_offset(&o.tool, &o.arguments),
        chunks: chunked.chunks,
        segments: planned,
        source: None,
    }
}

/// The small outputs in batches (§4 "Batching"), keyed `output_N` across the pass.
fn plan_small(
    candidates: Vec<crate::guard::span::Output>,
    entries: &[ContextEntry],
    run: &crate::guard::span::Run,
    s: &Settings,
    rewrite: &dyn Fn(usize) -> usize,
    requests: &mut Vec<ClassifierContext>,
    out: &mut Vec<PlannedSmall>,
) {
    use crate::guard::items::{batches, output_key, small_item, small_item_chars, small_of, small_request};
    let candidates = small_of(candidates, entries, run, s);
    let items: Vec<_> = candidates.iter().map(small_item).collect();
    let sizes: Vec<usize> = items.iter().map(small_item_chars).collect();
    for (first, count) in batches(&sizes, s.max_segment_chars, s.max_chunks_per_segment) {
        let request = requests.len();
        let mut batch = Vec::with_capacity(count);
        for i in first..first.saturating_add(count) {
            let (Some(c), Some(item)) = (candidates.get(i), items.get(i)) else { continue };
            let key = output_key(i + 1);
            out.push(PlannedSmall {
                entry_id: c.output.entry_id.clone(),
                tool: c.output.tool.clone(),
                label: item.tool.clone(),
                chars: c.output.chars,
                key: key.clone(),
                request,
                rewrite_chars: rewrite(c.output.entry_index),
            });
            batch.push((key, item.clone()));
        }
        requests.push(small_request(run, batch));
    }
}

/// The eligible old exchanges in batches, keyed `exchange_N`.
fn plan_exchanges(
    entries: &[ContextEntry],
    run: &crate::guard::span::Run,
    s: &Settings,
    rewrite: &dyn Fn(usize) -> usize,
    requests: &mut Vec<ClassifierContext>,
    out: &mut Vec<PlannedExchange>,
) {
    use crate::guard::exchange::{candidates, exchange_key, item, item_chars, request, stub, STUB_QUOTE};
    let spans = candidates(entries, run, s);
    let items: Vec<_> = spans.iter().map(item).collect();
    let sizes: Vec<usize> = items.iter().map(item_chars).collect();
    for (first, count) in crate::guard::items::batches(&sizes, s.max_segment_chars, s.max_chunks_per_segment) {
        let req = requests.len();
        let mut batch = Vec::with_capacity(count);
        for i in first..first.saturating_add(count) {
            let (Some(x), Some(it)) = (spans.get(i), items.get(i)) else { continue };
            let key = exchange_key(i + 1);
            out.push(PlannedExchange {
                prompt_id: x.prompt_id.clone(),
                label: crate::guard::render::one_line(&x.prompt, STUB_QUOTE),
                omit_ids: x.editable.iter().filter_map(|&e| entries.get(e)).map(|e| e.id.clone()).collect(),
                chars: x.chars,
                stub: stub(x),
                key: key.clone(),
                request: req,
                rewrite_chars: rewrite(x.prompt_index),
            });
            batch.push((key, it.clone()));
        }
        requests.push(request(run, batch));
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
    // The cache rewrite the edits other than exchange omissions cause (§4 break-even).
    let mut other_rewrite = 0usize;
    for (k, o) in pass.outputs.iter().enumerate() {
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
            other_rewrite = other_rewrite.max(pass.large_rewrite.get(k).copied().unwrap_or(0));
            let ranges = match o.source {
                Some(source) => {
                    let units = o.chunk_units();
                    decision
                        .verbatim
                        .iter()
                        .filter_map(|v| {
                            let (from, to) = *units.get(v.chunk)?;
                            Some(TextRange { start: v.start, end: v.end, source, from, to })
                        })
                        .collect()
                }
                None => Vec::new(),
            };
            edits.push(Draft::ContextEdit {
                target_id: o.entry_id.clone(),
                replacement: Some(Replacement { content: vec![TextBlock { kind: "text", text, ranges }] }),
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
    let outcome_of = |i: usize| answers.outcomes.get(i).unwrap_or(&missing);

    // Small outputs (§4): P ≥ smallKeepThreshold keeps, else the stub.
    for p in &pass.small {
        let d = crate::guard::items::decide_small(p, outcome_of(p.request), s);
        let after = d.stub.as_deref().map_or(p.chars, crate::text::js_len);
        if let Some(stub) = d.stub {
            saved = saved.saturating_add(p.chars.saturating_sub(after));
            other_rewrite = other_rewrite.max(p.rewrite_chars);
            edits.push(Draft::ContextEdit {
                target_id: p.entry_id.clone(),
                replacement: Some(text_replacement(vec![stub])),
            });
        }
        results.push(ResultRecord {
            kind: ResultKind::Small,
            entry_id: p.entry_id.clone(),
            tool: p.tool.clone(),
            label: p.label.clone(),
            outcome: if after < p.chars { ResultOutcome::Removed } else { ResultOutcome::Kept },
            reason: d.reason,
            before_chars: p.chars,
            after_chars: after,
            jev: d.trace,
            omitted: Vec::new(),
        });
    }
    for im in &pass.images {
        other_rewrite = other_rewrite.max(im.rewrite_chars);
    }

    // Old exchanges (§4): the unrelated ones, omitted together when they pay off.
    let judged: Vec<(&PlannedExchange, bool, String, String)> = pass
        .exchanges
        .iter()
        .map(|x| {
            let (unrelated, reason, trace) = crate::guard::exchange::unrelated(x, outcome_of(x.request), s);
            (x, unrelated, reason, trace)
        })
        .collect();
    let stub_len = |x: &PlannedExchange| crate::text::js_len(&x.stub);
    let unrelated_saved =
        judged.iter().filter(|j| j.1).fold(0usize, |a, (x, ..)| a.saturating_add(x.chars.saturating_sub(stub_len(x))));
    let unrelated_rewrite = judged.iter().filter(|j| j.1).map(|(x, ..)| x.rewrite_chars).max().unwrap_or(0);
    let omit = crate::guard::exchange::pays_off(
        unrelated_saved,
        unrelated_rewrite.saturating_sub(other_rewrite),
        pass.requests_so_far,
        s,
    );
    let mut omitted_ids: Vec<&str> = Vec::new();
    for (x, unrelated, reason, trace) in judged {
        let go = unrelated && omit;
        let mut omitted = Vec::new();
        if go {
            saved = saved.saturating_add(x.chars.saturating_sub(stub_len(x)));
            edits.push(Draft::ContextEdit {
                target_id: x.prompt_id.clone(),
                replacement: Some(text_replacement(vec![x.stub.clone()])),
            });
            for id in &x.omit_ids {
                edits.push(Draft::ContextEdit { target_id: id.clone(), replacement: None });
                omitted_ids.push(id);
            }
            omitted.push(x.prompt_id.clone());
            omitted.extend(x.omit_ids.iter().cloned());
        }
        results.push(ResultRecord {
            kind: ResultKind::Exchange,
            entry_id: x.prompt_id.clone(),
            tool: String::new(),
            label: x.label.clone(),
            outcome: if go { ResultOutcome::Removed } else { ResultOutcome::Kept },
            reason: if unrelated && !go { "deferred".to_string() } else { reason },
            before_chars: x.chars,
            after_chars: if go { stub_len(x) } else { x.chars },
            jev: trace,
            omitted,
        });
    }

    // Old images (§4): no request; an entry the pass omits keeps that edit.
    let mut image_edits = 0usize;
    for im in pass.images.iter().filter(|im| !omitted_ids.contains(&im.entry_id.as_str())) {
        if im.texts.is_empty() {
            continue;
        }
        image_edits += 1;
        saved = saved.saturating_add(im.before_chars.saturating_sub(im.after_chars));
        edits.push(Draft::ContextEdit {
            target_id: im.entry_id.clone(),
            replacement: Some(text_replacement(im.texts.clone())),
        });
        results.push(ResultRecord {
            kind: ResultKind::Image,
            entry_id: im.entry_id.clone(),
            tool: im.tool.clone(),
            label: format!("{} image{}", im.images, if im.images == 1 { "" } else { "s" }),
            outcome: ResultOutcome::Removed,
            reason: format!("{} turns old", im.turns),
            before_chars: im.before_chars,
            after_chars: im.after_chars,
            jev: String::new(),
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
    let record = (requests > 0 || image_edits > 0).then(|| Record {
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

/// A replacement of text blocks.
fn text_replacement(texts: Vec<String>) -> Replacement {
    Replacement {
        content: texts.into_iter().map(|text| TextBlock { kind: "text", text, ranges: Vec::new() }).collect(),
    }
}

/// A plan in the form the boundary hands out: the requests as JSON text, and
/// the state, which stays where it was made (inside the wasm module, held by
/// the extension as a handle) until [`finish_json`] reads it.
#[derive(Debug)]
pub struct Planned {
    /// `ClassifierContext[]` as JSON text; see [`plan_json`] for the chunk references.
    pub requests: String,
    pub state: PassState,
    pub skipped: Option<Skip>,
}

/// [`plan`] over the boundary's forms, which are shaped by a pass's size
/// (product.md "Budgets": ≤ 15 ms of the pass's own work for 1 MB):
///
/// - `input` is the UTF-8 JSON of `PassInput` whose long text blocks are out
///   of line (`{"type": "text", "textAt": k}`, see
///   [`entry::restore_texts`](crate::entry::restore_texts)); `texts` holds
///   them as UTF-8, one after another, and `lengths` their byte lengths. A
///   megabyte of output crosses as one copy of bytes: it is neither escaped
///   into JSON by the extension nor unescaped here.
/// - In the requests, a chunk of an output whose text is exactly out-of-line
///   text `k` is written as `[k, start, end]`: the range of `texts[k]` in
///   JavaScript characters (UTF-16 units, as `String.prototype.slice` takes
///   them) whose slice is the chunk's text. The extension slices its own
///   string, so the chunk texts are neither escaped here nor decoded and
///   parsed there. Other chunks are written as strings.
///
/// The requests are otherwise exactly what serde_json writes for them.
pub fn plan_json(input: &[u8], texts: &[u8], lengths: &[u32]) -> Result<Planned, String> {
    let texts = split_texts(texts, lengths)?;
    let mut value: Value = serde_json::from_str(utf8(input)?).map_err(|e| format!("pass input: {e}"))?;
    if let Some(entries) = value.get_mut("entries") {
        crate::entry::restore_texts(entries, &texts);
    }
    let mut plan = plan(&PassInput::from_value(value));
    let refs = chunk_refs(&mut plan, &texts);
    let requests = crate::guard::json::requests(&plan.requests, &refs);
    Ok(Planned { requests, skipped: plan.pass.skipped, state: plan.pass })
}

/// The out-of-line texts, each checked to be UTF-8.
fn split_texts<'a>(texts: &'a [u8], lengths: &[u32]) -> Result<Vec<&'a str>, String> {
    let mut rest = texts;
    let mut out = Vec::with_capacity(lengths.len());
    for &len in lengths {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > rest.len() {
            return Err("pass texts: the lengths exceed the bytes".to_string());
        }
        let (text, after) = rest.split_at(len);
        out.push(utf8(text)?);
        rest = after;
    }
    Ok(out)
}

/// Notes which outputs are exactly one of `texts` (an output of one text
/// block, the usual case), and for each request of such an output where its
/// chunks are.
fn chunk_refs(plan: &mut Plan, texts: &[&str]) -> Vec<Option<ChunkRefs>> {
    let mut refs = vec![None; plan.requests.len()];
    for o in &mut plan.pass.outputs {
        let Some(text) = texts.iter().position(|t| crate::text::same_bytes(t.as_bytes(), o.text.as_bytes())) else {
            continue;
        };
        if !covers(o) {
            continue;
        }
        o.source = Some(text);
        let units = o.chunk_units();
        for p in &o.segments {
            let first = p.segment.first;
            let (Some(r), Some(part)) = (p.request, units.get(first..first.saturating_add(p.segment.count))) else {
                continue;
            };
            if let Some(slot) = refs.get_mut(r) {
                *slot = Some(ChunkRefs { text, ranges: part.to_vec() });
            }
        }
    }
    refs
}

/// Bytes as text, checked. Read through `from_str` like every other JSON in
/// the core, so the wasm carries one JSON reader, not one per input kind.
fn utf8(bytes: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))
}

/// [`finish`] over JSON: a planned pass's state and the runner's result
/// (UTF-8 JSON of `PassAnswers`) in, `Outcome` as JSON text out, as
/// serde_json writes it except that a replacement text with kept chunks of an
/// out-of-line text is written as its parts: strings, and `[k, start, end]`
/// for the range of `texts[k]` in UTF-16 units, to be joined as they are. A
/// megabyte of kept output is then neither escaped here nor decoded and
/// parsed by the extension, which slices its own string (as for the
/// requests, see [`plan_json`]).
pub fn finish_json(pass: &PassState, answers: &[u8]) -> Result<String, String> {
    let answers: PassAnswers = serde_json::from_str(utf8(answers)?).map_err(|e| format!("pass answers: {e}"))?;
    crate::guard::json::outcome(&finish(pass, &answers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::span::tests::{call, entry, result, say, user};
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
        PassInput { entries, settings: Settings::default(), classifier: true }
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

    /// The pass input as the extension sends it: the tool result's text out of line.
    fn out_of_line(inp: &PassInput) -> (Vec<u8>, Vec<u8>, Vec<u32>) {
        let mut v = serde_json::to_value(inp).unwrap();
        let mut texts = Vec::new();
        let mut lengths = Vec::new();
        for e in v["entries"].as_array_mut().unwrap() {
            for m in e["messages"].as_array_mut().unwrap() {
                for b in m["content"].as_array_mut().into_iter().flatten() {
                    if b["type"] == "text" && b["text"].as_str().is_some_and(|t| t.len() > 1000) {
                        let t = b["text"].as_str().unwrap().to_string();
                        texts.extend_from_slice(t.as_bytes());
                        *b = json!({"type": "text", "textAt": lengths.len()});
                        lengths.push(t.len() as u32);
                    }
                }
            }
        }
        (serde_json::to_vec(&v).unwrap(), texts, lengths)
    }

    #[test]
    fn the_json_forms_take_texts_out_of_line_and_give_chunks_as_ranges() {
        let text = format!("{}\n\"quoted\" 日本 😀\n", grep_text(100));
        let inp = input(&[("bash", "", json!({"command": "rg -n status"}), text.clone())]);
        let p = plan(&inp);

        // All inline: exactly what serde_json writes.
        let planned = plan_json(&serde_json::to_vec(&inp).unwrap(), &[], &[]).unwrap();
        assert_eq!(planned.skipped, None);
        assert_eq!(planned.requests, serde_json::to_string(&p.requests).unwrap());
        assert_eq!(planned.state, p.pass);

        // Out of line: the same plan; each chunk is a range of the text in
        // UTF-16 units, and slicing gives the chunk text.
        let (json, texts, lengths) = out_of_line(&inp);
        let planned = plan_json(&json, &texts, &lengths).unwrap();
        assert_eq!(planned.state.outputs[0].source, Some(0));
        let mut state = planned.state.clone();
        state.outputs[0].source = None;
        assert_eq!(state, p.pass);
        let units: Vec<u16> = text.encode_utf16().collect();
        let slice = |range: &Value| {
            let r: Vec<usize> = range.as_array().unwrap().iter().map(|n| n.as_u64().unwrap() as usize).collect();
            assert_eq!(r[0], 0, "the only out-of-line text");
            String::from_utf16(&units[r[1]..r[2]]).unwrap()
        };
        let mut requests: Value = serde_json::from_str(&planned.requests).unwrap();
        for r in requests.as_array_mut().unwrap() {
            for (_, c) in r["state"]["chunks"].as_object_mut().unwrap() {
                *c = Value::String(slice(c));
            }
        }
        assert_eq!(requests, serde_json::to_value(&p.requests).unwrap());

        // The outcome: the kept chunks as ranges too; joined, the replacement text.
        let answers = answer_keeping(&p, "src/f3.ts:");
        let expected = finish(&p.pass, &answers);
        let written = finish_json(&planned.state, &serde_json::to_vec(&answers).unwrap()).unwrap();
        let mut out: Value = serde_json::from_str(&written).unwrap();
        let block = &mut out["entries"][0]["replacement"]["content"][0]["text"];
        let parts = block.as_array().unwrap().clone();
        assert!(parts.iter().any(Value::is_array) && parts.iter().any(Value::is_string));
        *block = Value::String(parts.iter().map(|p| p.as_str().map_or_else(|| slice(p), str::to_string)).collect());
        assert_eq!(out, serde_json::to_value(&expected).unwrap());
        // Without out-of-line texts, byte for byte what serde_json writes.
        let written = finish_json(&p.pass, &serde_json::to_vec(&answers).unwrap()).unwrap();
        assert_eq!(written, serde_json::to_string(&expected).unwrap(), "what serde_json writes");

        // Malformed forms are errors, or read as empty text; never a panic.
        assert!(plan_json(&json, &texts, &[lengths[0] + 1]).is_err());
        assert!(plan_json(&json, b"\xff\xfe", &[2]).is_err());
        assert!(plan_json(b"\xff", &[], &[]).is_err());
        assert!(finish_json(&planned.state, b"\xff").is_err());
        let missing = plan_json(&json, &[], &[]).unwrap();
        assert_eq!(missing.skipped, Some(Skip::NoLargeOutputs), "a missing text reads as empty");
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

    /// Answers every bool question of whole-item requests with `p(key)`.
    fn answer_items(plan: &Plan, p: impl Fn(&str) -> f64) -> PassAnswers {
        let outcomes = plan
            .requests
            .iter()
            .map(|r| {
                let v = serde_json::to_value(r).unwrap();
                let mut answers = serde_json::Map::new();
                for k in v["questions"].as_object().unwrap().keys() {
                    answers.insert(k.clone(), json!({"type": "bool", "probability": p(k)}));
                }
                RequestOutcome::Answered { answers: Value::Object(answers), input_tokens: 10.0, cost_usd: 0.0 }
            })
            .collect();
        PassAnswers { outcomes, timed_out: false, ms: 5.0 }
    }

    fn whole_session() -> Vec<ContextEntry> {
        use crate::guard::images::tests::{png_b64, shot};
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
    fn whole_items_small_exchanges_and_images_in_one_pass() {
        let mut inp = PassInput { entries: whole_session(), settings: Settings::default(), classifier: true };
        inp.settings.exchange_break_even = false;
        let p = plan(&inp);
        assert_eq!(p.pass.small.len(), 1);
        assert_eq!(p.pass.exchanges.len(), 2, "u2 and u3 are the recent two");
        assert_eq!(p.pass.images.len(), 1);
        assert_eq!(p.requests.len(), 2, "one batch of small outputs, one of exchanges");
        // Written by the fast writer as serde_json writes them, every kind.
        assert_eq!(crate::guard::json::requests(&p.requests, &[]), serde_json::to_string(&p.requests).unwrap());
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

    #[test]
    fn break_even_defers_and_images_work_without_a_classifier() {
        let inp = PassInput { entries: whole_session(), settings: Settings::default(), classifier: true };
        let p = plan(&inp);
        let out = finish(&p.pass, &answer_items(&p, |_| 0.05));
        let rec = out.record.unwrap();
        let ex: Vec<&ResultRecord> = rec.results.iter().filter(|r| r.kind == ResultKind::Exchange).collect();
        assert!(ex.iter().all(|r| r.outcome == ResultOutcome::Kept && r.reason == "deferred"), "{ex:?}");
        let none = PassInput { classifier: false, ..inp.clone() };
        let p = plan(&none);
        assert!(p.requests.is_empty());
        let out = finish(&p.pass, &PassAnswers::default());
        let rec = out.record.unwrap();
        assert_eq!((rec.requests, rec.results.len(), rec.results[0].kind), (0, 1, ResultKind::Image));
        assert_eq!(rec.results[0].reason, "4 turns old");
        let mut off = none;
        off.settings.image_keep_turns = 0;
        assert_eq!(plan(&off).pass.skipped, Some(Skip::NoClassifier));
    }
}
