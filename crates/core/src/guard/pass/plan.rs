//! Step one of the pass: the classifier requests and the state `finish` reads.

use crate::entry::ContextEntry;
use crate::guard::chunk::{chunk, chunk_text, segments};
use crate::guard::classify::ClassifierContext;
use crate::guard::decide::{large_request, RequestInput};
use crate::guard::exchange::PlannedExchange;
use crate::guard::items::PlannedSmall;
use crate::guard::outcome::Phase;
use crate::guard::render::{file_offset, tool_label};
use crate::guard::settings::Settings;
use crate::guard::span::{find_run, large_of, run_outputs};

use super::{PassInput, PassState, Plan, PlannedOutput, PlannedSegment, Skip};

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
