//! Step one of the pass: the classifier requests and the state `finish` reads.

use crate::cache::{rewrite, Outlook, Rewrite};
use crate::chunk::{chunk, chunk_text, segments};
use crate::classify::Chunks;
use crate::classify::{ClassifierContext, State};
use crate::decide::{large_request_with, RequestInput};
use crate::entry::ContextEntry;
use crate::exchange::PlannedExchange;
use crate::images::ImageEdit;
use crate::items::{run_calls, small_of, superseded_by, PlannedSmall, SmallOutput};
use crate::memo::{self, exchanges_judged_since};
use crate::outcome::{Phase, ResultKind};
use crate::render::{file_offset, tool_label};
use crate::run::{find_run, large_of, run_outputs, waiting_outputs, Output, Run};
use crate::scanned::Scanned;
use crate::secrets::{secret_file, Found, Secrets};
use crate::settings::Settings;
use crate::withhold::{withhold, Withheld};
use crate::worth::micros_of;

use super::{gate, JudgePrice, PassInput, PassState, Plan, PlannedOutput, PlannedSegment, Skip};

pub(crate) fn skipped(settings: &Settings, why: Skip) -> Plan {
    Plan {
        requests: Vec::new(),
        pass: PassState { settings: settings.clone(), skipped: Some(why), ..PassState::default() },
    }
}

/// The items a pass judges with the classifier, as its gates chose them
/// (at run end or at a mid-run checkpoint).
#[derive(Debug, Clone, Default)]
pub struct Items {
    pub large: Vec<Output>,
    pub small: Vec<SmallOutput>,
    pub exchanges: Vec<crate::exchange::Span>,
}

/// The requests of a pass's items and the planned items `finish` reads.
#[derive(Debug, Clone, Default)]
pub struct PlannedItems {
    pub requests: Vec<ClassifierContext>,
    pub outputs: Vec<PlannedOutput>,
    pub large_rewrite: Vec<usize>,
    pub small: Vec<PlannedSmall>,
    pub exchanges: Vec<PlannedExchange>,
    /// What the requests do not carry: secrets, and outputs of secret files.
    pub withheld: Withheld,
}

/// Provider requests the session has had so far (assistant messages).
pub(crate) fn requests_so_far(entries: &[ContextEntry]) -> usize {
    entries.iter().filter(|e| matches!(e.messages.first(), Some(crate::entry::Message::Assistant { .. }))).count()
}

/// A chat-model judge's weighing (issue 13), in millionths of a dollar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JudgeWeighed {
    /// The least the judge's requests cost: their prompts hold at least the
    /// judged characters and the system prompt, at 4 characters a token.
    pub cost_micros: usize,
    /// The most its edits save: every judged character removed, each later
    /// request reading it at the main model's price; as many later requests
    /// as the session has had (at least one), as the checkpoint's break-even assumes.
    pub saving_micros: usize,
}

/// The judge's least cost against its edits' most saving; `None` (not
/// weighed) without a chat-model judge, without requests, or with a free
/// main model (its edits save room, not money). Skip when `cost > saving`:
/// even the best case would not pay for the judge.
pub fn weigh_judge(price: Option<JudgePrice>, planned: &PlannedItems, requests_so_far: usize) -> Option<JudgeWeighed> {
    let p = price?;
    // NaN or infinite prices (a broken catalog entry) are not weighed either.
    let (judge, main) = (p.input_per_million, p.main_per_million);
    let priced = main > 0.0 && main.is_finite() && judge >= 0.0 && judge.is_finite();
    if planned.requests.is_empty() || !priced {
        return None;
    }
    let large = planned.outputs.iter().flat_map(|o| &o.segments).filter(|g| g.request.is_some());
    let judged = large.map(|g| g.segment.chars).sum::<usize>()
        + planned.small.iter().map(|x| x.chars).sum::<usize>()
        + planned.exchanges.iter().map(|x| x.chars).sum::<usize>();
    let prompt = judged.saturating_add(planned.requests.len().saturating_mul(crate::judge::SYSTEM.len()));
    Some(JudgeWeighed {
        cost_micros: micros_of(prompt, judge),
        saving_micros: micros_of(judged, main).saturating_mul(requests_so_far.max(1)),
    })
}

/// What a pass at the end of `entries` chooses: the run, the items its
/// gates let through to the classifier and, at a run end, the old images,
/// which need no request.
#[derive(Debug, Clone, Default)]
pub struct Chosen {
    pub run: Run,
    /// Empty without a classifier.
    pub items: Items,
    /// Each with the rewrite its edit causes and whether it is before the run.
    pub images: Vec<ImageEdit>,
    /// Why no large output is among the items, when none is.
    pub large_skip: Option<Skip>,
}

/// What a pass chooses for: a run end, with the rewrite `measure` of the
/// entries (its old images are weighed on it) and `seen`; or a mid-run
/// checkpoint, which chooses no images and weighs its batch by its own gates
/// (`checkpoint::plan`), its run read as mid-run (`Run::mid_run`).
///
/// `seen`: the old images and old exchanges of the entries before this index
/// were chosen at an earlier run end of the same branch, so they are not
/// read again (0 for a pass; the audit walks every run end of a branch and
/// would otherwise read its whole history at each). It must be 0 or the
/// index of a prompt, so that the exchanges read from it are the branch's.
#[derive(Clone, Copy)]
pub enum Choosing<'a> {
    RunEnd { measure: &'a Rewrite, seen: usize },
    MidRun,
}

/// A pass's choice at the end of `entries` (the pass's whole context, or a
/// prefix of a saved branch for the audit), with `input`'s settings,
/// classifier and records. `None` when they hold no run. A run end's large
/// outputs must reach `minRunChars` together; a checkpoint's need not.
pub fn choose(input: &PassInput, entries: &[ContextEntry], how: Choosing) -> Option<Chosen> {
    let s = &input.settings;
    let mut run = find_run(entries, s)?;
    run.mid_run = matches!(how, Choosing::MidRun);
    let (seen, min_run_chars, images) = match how {
        Choosing::RunEnd { measure, seen } => {
            let mut images = crate::images::old_images(entries.get(seen..).unwrap_or(&[]), s.image_keep_turns);
            for im in &mut images {
                im.entry_index += seen;
                let m = measure.measure(im.entry_index);
                (im.rewrite_chars, im.rewrite_basis, im.before_run) =
                    (m.chars, m.basis, im.entry_index < run.prompt_index);
            }
            (seen, s.min_run_chars, images)
        }
        Choosing::MidRun => (0, 0, Vec::new()),
    };
    if !input.classifier {
        return Some(Chosen { run, items: Items::default(), images, large_skip: Some(Skip::NoClassifier) });
    }
    // Read once for both sizes: each candidate holds its output's text.
    let (large, small_candidates): (Vec<_>, Vec<_>) =
        run_outputs(entries, &run, s).into_iter().partition(|o| o.chars >= s.min_result_chars);
    let large = large_of(large, s, min_run_chars);
    let large_skip = if large.total_chars == 0 {
        Some(Skip::NoLargeOutputs)
    } else if large.below_min_run {
        Some(Skip::BelowMinRunChars)
    } else {
        None
    };
    let judged = exchanges_judged_since(&input.records, run.prompt_index);
    let exchanges = crate::exchange::candidates_from(entries, seen, &run, s)
        .into_iter()
        .filter(|x| !memo::contains(&judged, &x.prompt_id))
        .collect();
    let mut items = Items { large: large.outputs, small: small_of(small_candidates, entries, &run, s), exchanges };
    leave_judging(&input.judging, entries, &mut items);
    Some(Chosen { run, items, images, large_skip })
}

/// Takes out the items another pass still out with the judge holds.
pub(crate) fn leave_judging(judging: &[String], entries: &[ContextEntry], items: &mut Items) {
    if judging.is_empty() {
        return;
    }
    let held = |i: usize| entries.get(i).is_some_and(|e| judging.contains(&e.id));
    items.large.retain(|o| !held(o.entry_index));
    items.small.retain(|o| !held(o.output.entry_index));
    leave_judged_exchanges(judging, entries, &mut items.exchanges);
}

/// Takes out the old exchanges whose prompt or any entry they would omit
/// another pass still out with the judge holds.
pub(crate) fn leave_judged_exchanges(
    judging: &[String],
    entries: &[ContextEntry],
    exchanges: &mut Vec<crate::exchange::Span>,
) {
    let held = |i: usize| entries.get(i).is_some_and(|e| judging.contains(&e.id));
    exchanges.retain(|x| !held(x.prompt_index) && !x.editable.iter().any(|&i| held(i)));
}

/// Step one: the run; its large outputs, their chunks and segments and one
/// classifier request per segment that may be sent; its small outputs and
/// the old exchanges (not judged earlier in this run), batched as whole
/// items; and the old images, which need no request (all as [`choose`]
/// chooses them). Without a classifier only the images.
pub fn plan(input: &PassInput) -> Plan {
    let s = &input.settings;
    if !s.enabled {
        return skipped(s, Skip::Off);
    }
    // At a prompt's first request only a lapsed cache lets anything in: nothing to measure or choose before.
    if input.model.opening && input.model.lapsed().is_none() {
        return skipped(s, Skip::CacheWarm);
    }
    let entries = &input.entries;
    let measure = rewrite(&input.model, entries);
    let Some(Chosen { run, mut items, images, mut large_skip }) =
        choose(input, entries, Choosing::RunEnd { measure: &measure, seen: 0 })
    else {
        return skipped(s, Skip::NoRun);
    };
    let requests_so_far = requests_so_far(entries);

    let mut planned = PlannedItems::default();
    let mut judge = None;
    let mut waiting = Vec::new();
    let mut break_even = Vec::new();
    if input.classifier {
        add_waiting(input, &run, &mut items);
        if !items.large.is_empty() {
            large_skip = None;
        }
        let later = gate::later_by_index(entries);
        let other = images.iter().filter(|im| !im.before_run).map(|im| im.rewrite_chars).max().unwrap_or(0);
        break_even.extend(gate_before_judge(input, &mut items, &later, other, &measure, &mut waiting));
        planned = plan_items(items, entries, &run, s, &measure, &later, &input.scanned);
        judge = weigh_judge(input.judge, &planned, requests_so_far).filter(|w| w.cost_micros > w.saving_micros);
        if judge.is_some() {
            // Not one request: old images still go, they need none.
            planned = PlannedItems::default();
            large_skip = Some(Skip::JudgeNotWorthIt);
        }
    }
    if planned.requests.is_empty() && images.is_empty() && waiting.is_empty() {
        let mut out = skipped(s, large_skip.unwrap_or(Skip::NoLargeOutputs));
        (out.pass.judge, out.pass.requests_so_far) = (judge, requests_so_far);
        return out;
    }
    let count = planned.requests.len();
    Plan {
        requests: planned.requests,
        pass: PassState {
            phase: Phase::RunEnd,
            settings: s.clone(),
            skipped: None,
            requests: count,
            answer: run.answer,
            outputs: planned.outputs,
            large_rewrite: planned.large_rewrite,
            small: planned.small,
            exchanges: planned.exchanges,
            withheld: planned.withheld,
            images,
            requests_so_far,
            cache: measure.cache(),
            prices: input.model.prices,
            lapsed: input.model.lapsed(),
            break_even,
            judge,
            waiting,
            late: None,
            at_plan: None,
        },
    }
}

/// Adds the outputs of earlier runs whose edits wait (`memo::deferred_outputs`)
/// to the run's, oldest first; not those inside an old exchange the pass
/// judges (its omission covers them).
fn add_waiting(input: &PassInput, run: &Run, items: &mut Items) {
    let s = &input.settings;
    let ids = memo::deferred_outputs(&input.records);
    let in_exchange = |i: usize| items.exchanges.iter().any(|x| x.editable.contains(&i));
    let earlier: Vec<Output> = waiting_outputs(&input.entries, run, &ids, s)
        .into_iter()
        .filter(|o| !in_exchange(o.entry_index) && !input.judging.contains(&o.entry_id))
        .collect();
    if earlier.is_empty() {
        return;
    }
    let (mut large, small): (Vec<Output>, Vec<Output>) =
        earlier.into_iter().partition(|o| o.chars >= s.min_result_chars);
    large.append(&mut items.large);
    items.large = large;
    let mut small = small_of(small, &input.entries, run, s);
    small.append(&mut items.small);
    items.small = small;
}

/// Before the judge: where the run end is gated (`runEndBreakEven`,
/// prices known, not a lapsed cache), the outputs whose edits could not pay
/// now even at the share the session's judge is expected to remove of their
/// kind (large, small: the best case until its answers say otherwise), its
/// cost included, are not asked about: they wait. Returns the decision when
/// some wait.
fn gate_before_judge(
    input: &PassInput,
    items: &mut Items,
    later: &[usize],
    other_rewrite: usize,
    measure: &Rewrite,
    waiting: &mut Vec<super::Waiting>,
) -> Option<crate::cache::BreakEven> {
    let s = &input.settings;
    if !s.run_end_break_even || !input.model.prices.priced() || input.model.lapsed().is_some() {
        return None;
    }
    let judge = |chars: usize| input.judge.map_or(0, |j| micros_of(chars, j.input_per_million));
    // What the session's judge is expected to remove of each kind: the best case until it has answered.
    let records = || input.records.iter().map(|r| &r.record);
    let share = |kind| memo::share_with_prior(records(), 1000, Some(kind));
    let (large_share, small_share) = (share(ResultKind::Large), share(ResultKind::Small));
    let candidate = |o: &Output| {
        let share = if o.chars >= input.settings.min_result_chars { large_share } else { small_share };
        gate::Candidate {
            rewrite: measure.from(o.entry_index),
            saved: (o.chars as u128 * share as u128 / 1000) as usize,
            later: later.get(o.entry_index).copied().unwrap_or(1),
            judge_micros: judge(o.chars),
        }
    };
    let outputs = items.large.iter().chain(items.small.iter().map(|x| &x.output));
    let candidates: Vec<gate::Candidate> = outputs.map(candidate).collect();
    if candidates.is_empty() {
        return None;
    }
    let outlook = Outlook {
        cache: measure.cache(),
        prices: input.model.prices,
        requests: requests_so_far(&input.entries),
        share_permille: 1000,
        ..Outlook::default()
    };
    let choice = gate::best(&candidates, other_rewrite, &outlook);
    let wait = |o: &Output| !choice.takes(measure.from(o.entry_index));
    let mut left = |o: &Output, kind| {
        waiting.push(super::Waiting {
            kind,
            entry_id: o.entry_id.clone(),
            tool: o.tool.clone(),
            label: tool_label(&o.tool, &o.arguments),
            chars: o.chars,
        })
    };
    for o in items.large.iter().filter(|o| wait(o)) {
        left(o, ResultKind::Large);
    }
    for x in items.small.iter().filter(|x| wait(&x.output)) {
        left(&x.output, ResultKind::Small);
    }
    items.large.retain(|o| !wait(o));
    items.small.retain(|x| !wait(&x.output));
    (!waiting.is_empty()).then_some(choice.decision)
}

/// The requests of chosen items, all in one list (large outputs by segment,
/// then small outputs and exchanges in batches), with each item's cache
/// rewrite from `measure` and, by entry index, the requests `later` expected to
/// carry it after a run end (`gate::later_by_index`; empty: 1, a checkpoint
/// weighs its own). A checkpoint's run (`run.mid_run`) gets the
/// checkpoint's requests: each large output also carries the calls made
/// after it and whether one superseded it.
pub fn plan_items(
    items: Items,
    entries: &[ContextEntry],
    run: &Run,
    s: &Settings,
    measure: &Rewrite,
    later: &[usize],
    scanned: &Scanned,
) -> PlannedItems {
    let later_of = |i: usize| later.get(i).copied().unwrap_or(1);
    let mut out = PlannedItems::default();
    let calls = if run.mid_run { run_calls(entries, run) } else { Vec::new() };
    // Each call labelled once: every output before it lists it.
    let labels: Vec<String> = calls.iter().map(|(_, n, a)| tool_label(n, a)).collect();
    let mut known = Vec::new();
    for o in items.large {
        out.large_rewrite.push(measure.from(o.entry_index));
        let first_later = calls.iter().position(|(i, _, _)| *i > o.entry_index).unwrap_or(calls.len());
        let later_calls = calls.get(first_later..).unwrap_or(&[]).iter().map(|(_, n, a)| (*n, *a));
        let superseded = superseded_by(&o.tool, &o.arguments, later_calls);
        let later_labels = labels.get(first_later..).unwrap_or(&[]);
        let requests_after = later_of(o.entry_index);
        let first_request = out.requests.len();
        let found = scanned.get(&o.entry_id, &o.text, &s.secret_patterns).map(<[Found]>::to_vec);
        let mut planned = plan_large(o, run, s, later_labels, superseded.as_deref(), &mut out.requests);
        // The output's secrets found when it arrived, by its requests' shared text.
        if let (Some(found), Some(State::Large(l))) = (found, out.requests.get(first_request).map(|r| &r.state)) {
            known.push((l.chunks.text.as_ptr(), found));
        }
        planned.later = requests_after;
        out.outputs.push(planned);
    }
    plan_small(items.small, run, s, measure, &later_of, &mut out.requests, &mut out.small);
    plan_exchanges(items.exchanges, entries, run, s, measure, &mut out.requests, &mut out.exchanges);
    // The one step every request to the judge passes before it leaves (issue 18).
    out.withheld.files = secret_file_labels(run, s);
    withhold(&mut out.requests, &Secrets::new(&s.secret_patterns), known, &mut out.withheld);
    out
}

/// The labels of the run's calls that read a secret file (never sent).
fn secret_file_labels(run: &Run, s: &Settings) -> Vec<String> {
    run.calls
        .iter()
        .filter(|c| secret_file(&c.arguments, &s.secret_files).is_some())
        .map(|c| tool_label(&c.name, &c.arguments))
        .collect()
}

/// One large output cut into chunks and segments, one request per sendable segment.
fn plan_large(
    o: Output,
    run: &Run,
    s: &Settings,
    later_calls: &[String],
    superseded: Option<&str>,
    requests: &mut Vec<ClassifierContext>,
) -> PlannedOutput {
    let chunked = chunk(&o.text);
    let segs = segments(&chunked.chunks, s.max_segment_chars, s.max_chunks_per_segment);
    // The chunks cover the output: their lines are its lines.
    let lines = chunked.chunks.iter().map(|c| c.lines).sum();
    let parts = segs.iter().filter(|g| !g.oversize).count();
    // The requests' chunks are ranges of one copy of the text, shared.
    let shared: std::rc::Rc<str> = std::rc::Rc::from(o.text.as_str());
    let mut planned = Vec::with_capacity(segs.len());
    let mut part = 0;
    for seg in segs {
        if seg.oversize {
            planned.push(PlannedSegment { segment: seg, request: None });
            continue;
        }
        part += 1;
        let part_chunks = chunked.chunks.get(seg.first..seg.first.saturating_add(seg.count)).unwrap_or(&[]);
        let ranges = part_chunks
            .iter()
            .map(|c| chunk_text(&o.text, c).map_or((0, 0), |t| (c.start, c.start.saturating_add(t.len()))))
            .collect();
        let chunks = Chunks { first: seg.first + 1, text: shared.clone(), ranges, withheld: false };
        requests.push(large_request_with(
            &RequestInput {
                run,
                tool: &o.tool,
                arguments: &o.arguments,
                is_error: o.is_error,
                lines,
                part,
                parts,
                first_number: seg.first + 1,
                chunk_texts: &[],
                later_calls,
                superseded,
            },
            chunks,
        ));
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
        later: 0,
    }
}

/// The small outputs in batches, keyed `output_N` across the pass.
fn plan_small(
    candidates: Vec<SmallOutput>,
    run: &Run,
    s: &Settings,
    measure: &Rewrite,
    later_of: &dyn Fn(usize) -> usize,
    requests: &mut Vec<ClassifierContext>,
    out: &mut Vec<PlannedSmall>,
) {
    use crate::items::{batches, output_key, small_item, small_item_chars, small_request};
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
                rewrite_chars: measure.from(c.output.entry_index),
                later: later_of(c.output.entry_index),
            });
            batch.push((key, item.clone()));
        }
        requests.push(small_request(run, batch));
    }
}

/// The eligible old exchanges in batches, keyed `exchange_N`.
fn plan_exchanges(
    spans: Vec<crate::exchange::Span>,
    entries: &[ContextEntry],
    run: &Run,
    s: &Settings,
    measure: &Rewrite,
    requests: &mut Vec<ClassifierContext>,
    out: &mut Vec<PlannedExchange>,
) {
    use crate::exchange::{exchange_key, item, item_chars, request, stub, STUB_QUOTE};
    let items: Vec<_> = spans.iter().map(item).collect();
    let sizes: Vec<usize> = items.iter().map(item_chars).collect();
    for (first, count) in crate::items::batches(&sizes, s.max_segment_chars, s.max_chunks_per_segment) {
        let req = requests.len();
        let mut batch = Vec::with_capacity(count);
        for i in first..first.saturating_add(count) {
            let (Some(x), Some(it)) = (spans.get(i), items.get(i)) else { continue };
            let key = exchange_key(i + 1);
            let rewrite = measure.measure(x.prompt_index);
            out.push(PlannedExchange {
                prompt_id: x.prompt_id.clone(),
                label: crate::render::one_line(&x.prompt, STUB_QUOTE),
                omit_ids: x.editable.iter().filter_map(|&e| entries.get(e)).map(|e| e.id.clone()).collect(),
                chars: x.chars,
                stub: stub(x),
                key: key.clone(),
                request: req,
                rewrite_chars: rewrite.chars,
                rewrite_basis: rewrite.basis,
            });
            batch.push((key, it.clone()));
        }
        requests.push(request(run, batch));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::PlannedExchange;
    use crate::items::PlannedSmall;
    use crate::judge::SYSTEM;
    use crate::pass::tests::{grep_text, input, whole_session};
    use serde_json::json;

    fn price(input_per_million: f64, main_per_million: f64) -> Option<JudgePrice> {
        Some(JudgePrice { input_per_million, main_per_million })
    }

    #[test]
    fn the_judge_is_weighed_with_worked_numbers() {
        let one = plan(&input(&[("bash", "", json!({"command": "rg -n status"}), grep_text(200))])).requests;
        // Two requests judging 40,000 + 20,000 characters.
        let planned = PlannedItems {
            requests: vec![one[0].clone(), one[0].clone()],
            small: vec![PlannedSmall { chars: 40_000, ..PlannedSmall::default() }],
            exchanges: vec![PlannedExchange { chars: 20_000, ..PlannedExchange::default() }],
            ..PlannedItems::default()
        };
        // Judge at $1/M (claude-haiku-4-5's input), main at $0.30/M (a Sonnet cache read):
        // at least (60,000 + 2 system prompts) / 4 tokens × $1/M;
        // at most 15,000 tokens × $0.30/M = 4,500 µ$ a later request, × requests so far.
        let cost = (60_000 + 2 * SYSTEM.len()) / 4;
        assert!(cost > 15_000 && cost < 18_000, "the system prompt is ~{} chars", SYSTEM.len());
        let w = weigh_judge(price(1.0, 0.3), &planned, 3).unwrap();
        assert_eq!((w.cost_micros, w.saving_micros), (cost, 13_500));
        assert!(w.cost_micros > w.saving_micros, "3 requests so far: not worth it");
        let w = weigh_judge(price(1.0, 0.3), &planned, 4).unwrap();
        assert_eq!((w.cost_micros, w.saving_micros), (cost, 18_000));
        assert!(w.cost_micros <= w.saving_micros, "4 requests so far: worth it");
        // A session with no request yet counts as one.
        assert_eq!(weigh_judge(price(1.0, 0.3), &planned, 0).unwrap().saving_micros, 4_500);
        // Not weighed: a classifier, a free main model, nothing to ask.
        assert_eq!(weigh_judge(None, &planned, 3), None);
        assert_eq!(weigh_judge(price(1.0, 0.0), &planned, 3), None);
        assert_eq!(weigh_judge(price(1.0, 0.3), &PlannedItems::default(), 3), None);
        // A free (local) judge costs nothing.
        assert_eq!(weigh_judge(price(0.0, 0.3), &planned, 1).unwrap().cost_micros, 0);
    }

    #[test]
    fn an_expensive_judge_sends_nothing_and_old_images_still_go() {
        let inp = PassInput { entries: whole_session(), ..PassInput::default() };
        let sent = plan(&inp);
        assert!(!sent.requests.is_empty() && !sent.pass.images.is_empty());
        let cheap = plan(&PassInput { judge: price(0.1, 3.0), ..inp.clone() });
        assert_eq!((cheap.requests.len(), cheap.pass.skipped), (sent.requests.len(), None));
        let dear = plan(&PassInput { judge: price(1_000.0, 0.3), ..inp.clone() });
        assert!(dear.requests.is_empty() && dear.pass.outputs.is_empty() && dear.pass.exchanges.is_empty());
        assert_eq!((dear.pass.images.len(), dear.pass.skipped), (sent.pass.images.len(), None));
        assert_eq!(cheap.pass.judge, None, "only a weighing that sent nothing is kept");
        let w = dear.pass.judge.unwrap();
        assert!(w.cost_micros > w.saving_micros);
        // Without old images the pass is skipped, and says why, with its figures for /guard.
        let mut no_images = PassInput { judge: price(1_000.0, 0.3), ..inp };
        no_images.settings.image_keep_turns = 0;
        let skipped = plan(&no_images).pass;
        assert_eq!((skipped.skipped, skipped.judge), (Some(Skip::JudgeNotWorthIt), Some(w)));
        assert_eq!(skipped.requests_so_far, dear.pass.requests_so_far);
    }
}
