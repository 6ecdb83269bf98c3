//! Step two of the pass: how each request ended → each segment's verdict,
//! each item's decision, the `context_edit` drafts and the record.

use crate::cache::{BreakEven, Measured, Outlook, Rule};
use crate::chunk::Segment;
use crate::classify::RequestOutcome;
use crate::decide::{decide_result, interpret, Outcome as ResultOutcome, Reason, ResultInput, Verdict};
use crate::exchange::{run_end_break_even, PlannedExchange};
use crate::images::ImageEdit;
use crate::memo::DEFERRED;
use crate::outcome::Phase;
use crate::outcome::{
    Draft, Outcome, Record, Replacement, ResultKind, ResultRecord, TextBlock, TextRange, RECORD_TYPE, RECORD_VERSION,
};
use crate::settings::Settings;
use crate::worth::later_after_run;

use super::gate::{self, Candidate};
use super::{covers, PassAnswers, PassState};

/// Step two: each segment's verdict, each output's decision, the drafts and
/// the record. One step per kind of item, in this order: the large outputs and
/// the small ones are decided and wait on the outputs' money rule; then the old
/// exchanges and the old images, each kind through one group gate; then the
/// record.
pub fn finish(pass: &PassState, answers: &PassAnswers) -> Outcome {
    let mut out = finish_here(pass, answers);
    // A checkpoint's late answers whose edits would have paid where it was planned and all wait where it
    // lands (the rewrite grew meanwhile): the extension may land them again later (`Outcome::carry`). A
    // run end's that wait are weighed again by a later run end (`memo::deferred_outputs`), on a lapsed
    // cache for free: carried, they would be held from it.
    let edits = |o: &Outcome| o.entries.iter().any(|d| matches!(d, Draft::ContextEdit { .. }));
    let waits =
        out.record.as_ref().is_some_and(|r| r.results.iter().any(|x| x.reason == DEFERRED && x.judged_chars > 0));
    out.carry = pass.phase == Phase::MidRun
        && waits
        && !edits(&out)
        && pass.at_plan.as_deref().is_some_and(|p| edits(&finish_here(p, answers)));
    out
}

/// [`finish`] where the pass is now (planned, or as [`land`](super::land) left it).
fn finish_here(pass: &PassState, answers: &PassAnswers) -> Outcome {
    let missing = if answers.timed_out {
        RequestOutcome::Timeout
    } else {
        RequestOutcome::Error { message: "no outcome for this request".to_string() }
    };
    let outcome_of = |i: usize| answers.outcomes.get(i).unwrap_or(&missing);
    let s = &deciding(pass);
    let mut f = Finishing { break_even: pass.break_even.clone(), ..Finishing::default() };
    let mut pending = large_outputs(pass, s, outcome_of, &mut f);
    pending.extend(small_outputs(pass, s, outcome_of, &mut f));
    waiting(pass, &mut f);
    gate_outputs(pass, pending, &mut f);
    let omitted_ids = exchanges(pass, s, outcome_of, &mut f);
    let image_edits = images(pass, s, &omitted_ids, &mut f);
    record(pass, answers, image_edits, f)
}

/// The settings `finish` decides by, for the pass's phase. A run end decides
/// by the user's. A mid-run checkpoint decides chunks by its own threshold
/// (`midRunChunkKeepThreshold`), keeps no file for being cited (there is no
/// final answer yet), and weighs no group of old exchanges apart (its own
/// break-even weighed them with everything else). The pass holds the user's
/// settings as they are.
fn deciding(pass: &PassState) -> Settings {
    let s = &pass.settings;
    match pass.phase {
        Phase::RunEnd => s.clone(),
        Phase::MidRun => Settings {
            chunk_keep_threshold: s.mid_run_chunk_keep_threshold,
            keep_cited_files: false,
            exchange_break_even: false,
            ..s.clone()
        },
    }
}

/// What the steps build up: the drafts, the results, what they keep out, the
/// cache rewrite the edits so far cause (each group's break-even counts only
/// what it adds), and the break-even decisions.
#[derive(Default)]
struct Finishing {
    edits: Vec<Draft>,
    results: Vec<ResultRecord>,
    saved: usize,
    other_rewrite: usize,
    break_even: Vec<BreakEven>,
}

/// The large outputs: each segment's verdict, each output's decision; the
/// edits wait on the outputs' gate.
fn large_outputs<'a>(
    pass: &PassState,
    s: &Settings,
    outcome_of: impl Fn(usize) -> &'a RequestOutcome,
    f: &mut Finishing,
) -> Vec<Pending> {
    let mut pending = Vec::new();
    for (k, o) in pass.outputs.iter().enumerate() {
        if !covers(o) {
            // A state that came back altered: keep the output, say why.
            let bad = Reason::BadPlan.as_str();
            f.results.push(ResultRecord::whole(ResultKind::Large, &o.entry_id, &o.tool, &o.label, o.chars, bad));
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
                    Some(i) if !seg.oversize => interpret(outcome_of(i), seg.first.saturating_add(1), seg.count, s),
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
            let candidate = Candidate {
                rewrite: pass.large_rewrite.get(k).copied().unwrap_or(0),
                saved: o.chars.saturating_sub(decision.after_chars),
                later: o.later,
                judge_micros: 0,
            };
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
            let draft = Draft::ContextEdit {
                target_id: o.entry_id.clone(),
                replacement: Some(Replacement { content: vec![TextBlock { kind: "text", text, ranges }] }),
            };
            pending.push(Pending { candidate, draft, result: f.results.len() });
        }
        f.results.push(ResultRecord {
            outcome: decision.outcome,
            reason: decision.reason,
            after_chars: decision.after_chars,
            jev: decision.trace,
            ..ResultRecord::whole(ResultKind::Large, &o.entry_id, &o.tool, &o.label, o.chars, "")
        });
    }
    pending
}

/// The small outputs: P ≥ smallKeepThreshold keeps, else the stub, which
/// waits on the outputs' gate.
fn small_outputs<'a>(
    pass: &PassState,
    s: &Settings,
    outcome_of: impl Fn(usize) -> &'a RequestOutcome,
    f: &mut Finishing,
) -> Vec<Pending> {
    let mut pending = Vec::new();
    for p in &pass.small {
        let d = crate::items::decide_small(p, outcome_of(p.request), s);
        let after = d.stub.as_deref().map_or(p.chars, crate::text::js_len);
        if let Some(stub) = d.stub {
            pending.push(Pending {
                candidate: Candidate {
                    rewrite: p.rewrite_chars,
                    saved: p.chars.saturating_sub(after),
                    later: p.later,
                    judge_micros: 0,
                },
                draft: Draft::ContextEdit {
                    target_id: p.entry_id.clone(),
                    replacement: Some(text_replacement(vec![stub])),
                },
                result: f.results.len(),
            });
        }
        f.results.push(ResultRecord {
            outcome: if after < p.chars { ResultOutcome::Removed } else { ResultOutcome::Kept },
            reason: d.reason,
            after_chars: after,
            jev: d.trace,
            ..ResultRecord::whole(ResultKind::Small, &p.entry_id, &p.tool, &p.label, p.chars, "")
        });
    }
    pending
}

/// Outputs whose edits the pass's plan left waiting (`gate`): not asked now.
fn waiting(pass: &PassState, f: &mut Finishing) {
    for w in &pass.waiting {
        f.results.push(ResultRecord::whole(w.kind, &w.entry_id, &w.tool, &w.label, w.chars, DEFERRED));
    }
}

/// The outputs' edits through the money rule (`runEndBreakEven`): those that
/// do not pay now wait. Images inside the run go once old enough: they are
/// edits the others ride along with, so their rewrite is counted first.
fn gate_outputs(pass: &PassState, pending: Vec<Pending>, f: &mut Finishing) {
    for im in pass.images.iter().filter(|im| !im.before_run && !im.texts.is_empty()) {
        f.other_rewrite = f.other_rewrite.max(im.rewrite_chars);
    }
    let choice = output_outlook(pass, &pending).map(|(outlook, later)| {
        let candidates: Vec<Candidate> =
            pending.iter().map(|p| Candidate { later: later.unwrap_or(p.candidate.later), ..p.candidate }).collect();
        gate::best(&candidates, f.other_rewrite, &outlook)
    });
    f.break_even.extend(choice.map(|c| c.decision));
    for p in pending {
        if choice.is_none_or(|c| c.takes(p.candidate.rewrite)) {
            f.saved = f.saved.saturating_add(p.candidate.saved);
            f.other_rewrite = f.other_rewrite.max(p.candidate.rewrite);
            f.edits.push(p.draft);
        } else if let Some(r) = f.results.get_mut(p.result) {
            (r.outcome, r.reason) = (ResultOutcome::Kept, DEFERRED.to_string());
            (r.judged_chars, r.after_chars) = (r.after_chars.max(1), r.before_chars);
        }
    }
}

/// The one gate of a group that goes together (the unrelated old exchanges,
/// the old images from before the run's prompt): whether it pays off over the
/// rewrite the edits before it do not already cause (`rule`'s minimum saving
/// included). No group: nothing to weigh, it goes.
fn group_gate(
    pass: &PassState,
    s: &Settings,
    rule: Rule,
    saved: usize,
    own: Option<Measured>,
    f: &mut Finishing,
) -> bool {
    let Some(own) = own else { return true };
    let outlook = Outlook {
        cache: pass.cache,
        prices: pass.prices,
        requests: pass.requests_so_far,
        later: later_after_run(pass.requests_so_far),
        lapsed: pass.lapsed,
        ..Outlook::default()
    };
    let gate = run_end_break_even(rule, saved, own, f.other_rewrite, outlook, s);
    let go = gate.as_ref().is_none_or(|g| g.paid_off);
    f.break_even.extend(gate);
    if go {
        f.other_rewrite = f.other_rewrite.max(own.chars);
    }
    go
}

/// Old exchanges: the unrelated ones, omitted together when they pay off.
/// Returns the ids of the entries omitted with them.
fn exchanges<'a>(
    pass: &'a PassState,
    s: &Settings,
    outcome_of: impl Fn(usize) -> &'a RequestOutcome,
    f: &mut Finishing,
) -> Vec<&'a str> {
    let judged: Vec<(&PlannedExchange, bool, String, String)> = pass
        .exchanges
        .iter()
        .map(|x| {
            let (unrelated, reason, trace) = crate::exchange::unrelated(x, outcome_of(x.request), s);
            (x, unrelated, reason, trace)
        })
        .collect();
    let stub_len = |x: &PlannedExchange| crate::text::js_len(&x.stub);
    let unrelated_saved =
        judged.iter().filter(|j| j.1).fold(0usize, |a, (x, ..)| a.saturating_add(x.chars.saturating_sub(stub_len(x))));
    // The earliest omission rewrites the most (each provider's measure only grows towards the start).
    let unrelated_rewrite = judged
        .iter()
        .filter(|j| j.1)
        .map(|(x, ..)| Measured { chars: x.rewrite_chars, basis: x.rewrite_basis })
        .max_by_key(|m| m.chars);
    let omit = group_gate(pass, s, Rule::Exchanges, unrelated_saved, unrelated_rewrite, f);
    let mut omitted_ids: Vec<&str> = Vec::new();
    for (x, unrelated, reason, trace) in judged {
        let go = unrelated && omit;
        let mut omitted = Vec::new();
        if go {
            f.saved = f.saved.saturating_add(x.chars.saturating_sub(stub_len(x)));
            f.edits.push(Draft::ContextEdit {
                target_id: x.prompt_id.clone(),
                replacement: Some(text_replacement(vec![x.stub.clone()])),
            });
            for id in &x.omit_ids {
                f.edits.push(Draft::ContextEdit { target_id: id.clone(), replacement: None });
                omitted_ids.push(id);
            }
            omitted.push(x.prompt_id.clone());
            omitted.extend(x.omit_ids.iter().cloned());
        }
        f.results.push(ResultRecord {
            outcome: if go { ResultOutcome::Removed } else { ResultOutcome::Kept },
            reason: if unrelated && !go { DEFERRED.to_string() } else { reason },
            after_chars: if go { stub_len(x) } else { x.chars },
            jev: trace,
            omitted,
            ..ResultRecord::whole(ResultKind::Exchange, &x.prompt_id, "", &x.label, x.chars, "")
        });
    }
    omitted_ids
}

/// Old images: no request; an entry the pass omits keeps that edit. Those
/// from before the run's prompt go together when they pay off, as exchanges
/// do but with no minimum saving; the rest are deferred. Returns the edits.
fn images(pass: &PassState, s: &Settings, omitted_ids: &[&str], f: &mut Finishing) -> usize {
    let images: Vec<&ImageEdit> =
        pass.images.iter().filter(|im| !im.texts.is_empty() && !omitted_ids.contains(&im.entry_id.as_str())).collect();
    let old = images.iter().filter(|im| im.before_run);
    let old_saved = old.clone().fold(0usize, |a, im| a.saturating_add(im.before_chars.saturating_sub(im.after_chars)));
    let old_rewrite =
        old.map(|im| Measured { chars: im.rewrite_chars, basis: im.rewrite_basis }).max_by_key(|m| m.chars);
    let old_go = group_gate(pass, s, Rule::Images, old_saved, old_rewrite, f);
    let mut image_edits = 0usize;
    for im in images {
        let go = !im.before_run || old_go;
        if go {
            image_edits += 1;
            f.saved = f.saved.saturating_add(im.before_chars.saturating_sub(im.after_chars));
            f.edits.push(Draft::ContextEdit {
                target_id: im.entry_id.clone(),
                replacement: Some(text_replacement(im.texts.clone())),
            });
        }
        let label = format!("{} image{}", im.images, if im.images == 1 { "" } else { "s" });
        f.results.push(ResultRecord {
            outcome: if go { ResultOutcome::Removed } else { ResultOutcome::Kept },
            reason: if go { format!("{} turns old", im.turns) } else { DEFERRED.to_string() },
            after_chars: if go { im.after_chars } else { im.before_chars },
            ..ResultRecord::whole(ResultKind::Image, &im.entry_id, &im.tool, &label, im.before_chars, "")
        });
    }
    image_edits
}

/// The record of the pass (when it asked, edited an image or left outputs
/// waiting), after the drafts.
fn record(pass: &PassState, answers: &PassAnswers, image_edits: usize, f: Finishing) -> Outcome {
    let requests = pass.requests;
    let (input_tokens, cost_usd) = answers
        .outcomes
        .iter()
        .take(requests)
        .map(RequestOutcome::usage)
        .fold((0.0, 0.0), |(t, c), (dt, dc)| (t + dt, c + dc));
    let timed_out =
        answers.timed_out || answers.outcomes.iter().take(requests).any(|o| matches!(o, RequestOutcome::Timeout));
    let decisions = f.break_even.clone();
    let saved = f.saved;
    let record = (requests > 0 || image_edits > 0 || !pass.waiting.is_empty()).then(|| Record {
        v: RECORD_VERSION,
        phase: pass.phase,
        model: pass.settings.model.clone(),
        saved_chars: saved,
        requests,
        input_tokens,
        cost_usd,
        ms: if answers.ms.is_finite() && answers.ms > 0.0 { answers.ms } else { 0.0 },
        timed_out,
        results: f.results,
        break_even: f.break_even,
        withheld: pass.withheld.clone(),
        late: pass.late,
    });
    let mut entries = f.edits;
    if let Some(r) = &record {
        entries.push(Draft::Custom { custom_type: RECORD_TYPE.to_string(), data: r.clone() });
    }
    Outcome { entries, record, saved_chars: saved, break_even: decisions, carry: false }
}

/// An output's edit, decided, before the gate lets it go or makes it wait.
struct Pending {
    candidate: Candidate,
    draft: Draft,
    /// Its result's index in the record.
    result: usize,
}

/// The outlook the outputs' gate weighs on, and the later requests that
/// replace each output's own (a checkpoint's estimate), or `None` where no
/// gate applies: no edits; a run end with `runEndBreakEven` off or no prices
/// (the edits save room, not money: they go, as before issue 26); a
/// checkpoint without a break-even (before Pi compacts, or `midRunBreakEven`
/// off), or let through by the room trigger whose answers keep out at least
/// `midRunRoomMinTokens` (fewer: the money rule weighs them after all).
fn output_outlook(pass: &PassState, pending: &[Pending]) -> Option<(Outlook, Option<usize>)> {
    if pending.is_empty() {
        return None;
    }
    let outlook = Outlook {
        cache: pass.cache,
        prices: pass.prices,
        requests: pass.requests_so_far,
        share_permille: 1000,
        lapsed: pass.lapsed,
        ..Outlook::default()
    };
    match pass.phase {
        Phase::RunEnd => (pass.settings.run_end_break_even && pass.prices.priced()).then_some((outlook, None)),
        Phase::MidRun => {
            let d = pass.break_even.iter().find(|d| d.rule == Rule::Checkpoint)?;
            let saved = pending.iter().fold(0usize, |a, p| a.saturating_add(p.candidate.saved));
            let roomy = d.room && saved / 4 >= pass.settings.mid_run_room_min_tokens;
            (!roomy && pass.prices.priced())
                .then_some((Outlook { requests: d.requests, later: d.later, ..outlook }, Some(d.later)))
        }
    }
}

/// A replacement of text blocks.
fn text_replacement(texts: Vec<String>) -> Replacement {
    Replacement {
        content: texts.into_iter().map(|text| TextBlock { kind: "text", text, ranges: Vec::new() }).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{Basis, Cache, MainModel};
    use crate::entry::ContextEntry;
    use crate::pass::tests::{answer_items, answer_keeping, grep_text, input, whole_session};
    use crate::pass::{plan, PassInput, Skip};
    use crate::testing::{call, entry, result, say, user};
    use crate::testing::{png_b64, shot};
    use serde_json::json;

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

    #[test]
    fn break_even_defers_and_images_work_without_a_classifier() {
        let inp = PassInput { entries: whole_session(), ..PassInput::default() };
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

    fn codex() -> MainModel {
        MainModel { provider: "openai-codex".into(), api: "openai-codex-responses".into(), ..MainModel::default() }
    }

    fn anthropic(read_points: &[&str]) -> MainModel {
        MainModel {
            provider: "anthropic".into(),
            api: "anthropic-messages".into(),
            pin: true,
            read_points: read_points.iter().map(|p| p.to_string()).collect(),
            ..MainModel::default()
        }
    }

    #[test]
    fn on_codex_exchanges_ride_along_with_any_other_edit() {
        // whole_session: u0 and u1 are eligible, 4,043 chars each, stubs of 168: 7,750 saved
        // (under the 8,000 minimum). The whole context is 23,577; 13 requests so far.
        let mut inp = PassInput { entries: whole_session(), model: codex(), ..PassInput::default() };
        let unrelated = |k: &str| if k.starts_with("exchange") { 0.05 } else { 0.9 };
        // The image inside the run is removed: Codex rewrites everything anyway, the
        // omissions add nothing (rewrite 0) and go, minimum or not.
        let p = plan(&inp);
        let rec = finish(&p.pass, &answer_items(&p, unrelated)).record.unwrap();
        let ex = |rec: &Record| {
            rec.results
                .iter()
                .filter(|r| r.kind == ResultKind::Exchange)
                .map(|r| (r.outcome, r.reason.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(ex(&rec), vec![(ResultOutcome::Removed, "unrelated".to_string()); 2]);
        let b = &rec.break_even[0];
        assert_eq!(
            (b.rule, b.saved_chars, b.requests, b.rewrite_chars, b.cache, b.basis, b.paid_off),
            (Rule::Exchanges, 7_750, 13, 0, Cache::OpenAiCodex, Basis::Whole, true)
        );
        // No other edit (no image, the small output kept): the omissions rewrite the whole
        // context, 23,577, and 7,750 is under the minimum: deferred.
        inp.settings.image_keep_turns = 0;
        let p = plan(&inp);
        let rec = finish(&p.pass, &answer_items(&p, unrelated)).record.unwrap();
        assert_eq!(ex(&rec), vec![(ResultOutcome::Kept, "deferred".to_string()); 2]);
        let b = &rec.break_even[0];
        assert_eq!((b.rewrite_chars, b.min_saving_chars, b.factor, b.paid_off), (23_577, 8_000, 16, false));
        // A removed small output is another edit too.
        let p = plan(&inp);
        let rec = finish(&p.pass, &answer_items(&p, |_| 0.05)).record.unwrap();
        assert_eq!(ex(&rec)[0].0, ResultOutcome::Removed);
        assert_eq!(rec.break_even[0].rewrite_chars, 0);
    }

    /// An image read in an earlier exchange (`old`, before the run's prompt,
    /// at entry 4 after a 500-character result `toolu_pre`), one read in the
    /// run (`new`), then `answers` replies: 4 + `answers` requests so far.
    /// Each image is 6,566 chars; from 10 turns old its stub leaves 140:
    /// 6,426 saved.
    fn images_session(answers: usize) -> Vec<ContextEntry> {
        let mut e = vec![
            entry("u0", user("look")),
            entry("ap", call("toolu_pre", "bash", json!({}))),
            entry("rp", result("toolu_pre", "bash", &"p".repeat(500))),
            entry("a0", call("c0", "read", json!({"path": "a.png"}))),
            shot("old", "Read image", &png_b64(1280, 960)),
            entry("s0", say("grey")),
            entry("u", user("and the new one")),
            entry("a1", call("c1", "read", json!({"path": "b.png"}))),
            shot("new", "Read image", &png_b64(1280, 960)),
        ];
        e.extend((0..answers).map(|k| entry(&format!("m{k}"), say("ok"))));
        e
    }

    fn images(model: MainModel, answers: usize) -> Record {
        let inp = PassInput { entries: images_session(answers), classifier: false, model, ..PassInput::default() };
        finish(&plan(&inp).pass, &PassAnswers::default()).record.unwrap()
    }

    fn image_outcomes(rec: &Record) -> Vec<(&str, ResultOutcome, &str)> {
        rec.results.iter().map(|r| (r.entry_id.as_str(), r.outcome, r.reason.as_str())).collect()
    }

    #[test]
    fn a_pass_that_only_defers_appends_nothing_but_says_its_decision() {
        // The new image is 1 turn old (kept), the old one does not pay off yet:
        // no edit, no record, and the decision still comes out for `/guard`.
        let faux = MainModel { provider: "faux".into(), api: "faux".into(), ..MainModel::default() };
        let inp = PassInput { entries: images_session(1), classifier: false, model: faux, ..PassInput::default() };
        let out = finish(&plan(&inp).pass, &PassAnswers::default());
        assert!(out.entries.is_empty() && out.record.is_none());
        assert_eq!(out.break_even.len(), 1);
        assert_eq!((out.break_even[0].rule, out.break_even[0].paid_off), (Rule::Images, false));
        let json = crate::wire::outcome(&out).unwrap();
        assert!(json.contains(r#""record":null"#) && json.contains(r#""breakEven":[{"rule":"images""#), "{json}");
    }

    #[test]
    fn old_images_wait_for_the_break_even_and_images_in_the_run_do_not() {
        let faux = MainModel { provider: "faux".into(), api: "faux".into(), ..MainModel::default() };
        // Prefix: `old` rewrites from entry 4, `new` from entry 8 anyway: the extra is
        // entries 4–7, 6,566 + 4 + 15 + 20 = 6,605. 6,426 × 16 requests = 102,816 <
        // 16 × 6,605 = 105,680: deferred (no minimum saving applies to images).
        let rec = images(faux.clone(), 12);
        assert_eq!(
            image_outcomes(&rec),
            [("old", ResultOutcome::Kept, "deferred"), ("new", ResultOutcome::Removed, "12 turns old")]
        );
        assert_eq!(rec.results[0].after_chars, 6_566);
        assert_eq!(rec.saved_chars, 6_426, "only the image in the run");
        let b = &rec.break_even[0];
        assert_eq!(
            (b.rule, b.saved_chars, b.requests, b.factor, b.rewrite_chars, b.min_saving_chars),
            (Rule::Images, 6_426, 16, 16, 6_605, 0)
        );
        assert_eq!((b.cache, b.basis, b.paid_off), (Cache::Prefix, Basis::FirstEdit, false));
        // One request more: 6,426 × 17 = 109,242 ≥ 105,680: removed.
        let rec = images(faux.clone(), 13);
        assert_eq!(image_outcomes(&rec)[0], ("old", ResultOutcome::Removed, "15 turns old"));
        assert_eq!((rec.saved_chars, rec.break_even[0].paid_off), (2 * 6_426, true));
        // exchangeBreakEven off turns the gate off for images too.
        let mut inp = PassInput { entries: images_session(3), classifier: false, model: faux, ..PassInput::default() };
        inp.settings.exchange_break_even = false;
        let rec = finish(&plan(&inp).pass, &PassAnswers::default()).record.unwrap();
        assert_eq!(image_outcomes(&rec)[0].1, ResultOutcome::Removed);
        assert!(rec.break_even.is_empty());
    }

    #[test]
    fn old_images_by_provider() {
        // Codex: the image in the run rewrites everything, the old one rides along.
        let rec = images(codex(), 3);
        assert_eq!(image_outcomes(&rec)[0], ("old", ResultOutcome::Removed, "5 turns old"));
        assert_eq!((rec.break_even[0].rewrite_chars, rec.break_even[0].cache), (0, Cache::OpenAiCodex));
        // Anthropic, read point on `toolu_pre` (entry 2): `old` rewrites after it, `new`
        // after the question (entry 6): the extra is entries 3–6, 20 + 6,566 + 4 + 15 =
        // 6,605; 6,426 × 17 = 109,242 ≥ 105,680: removed.
        let rec = images(anthropic(&["toolu_pre"]), 13);
        assert_eq!(image_outcomes(&rec)[0].1, ResultOutcome::Removed);
        let b = &rec.break_even[0];
        assert_eq!((b.rewrite_chars, b.cache, b.basis, b.paid_off), (6_605, Cache::Anthropic, Basis::ReadPoint, true));
        // Only the question (after `old`): `old` rewrites the whole context, the extra is
        // entries 0–6, 6,605 + 4 + 6 + 500 = 7,115; 109,242 < 16 × 7,115 = 113,840: deferred.
        let rec = images(anthropic(&[]), 13);
        assert_eq!(image_outcomes(&rec)[0].1, ResultOutcome::Kept);
        let b = &rec.break_even[0];
        assert_eq!((b.rewrite_chars, b.basis, b.paid_off), (7_115, Basis::Whole, false));
        // The pin off: both rewrite the whole context; the old one rides along.
        let rec = images(MainModel { pin: false, ..anthropic(&["toolu_pre"]) }, 3);
        assert_eq!((image_outcomes(&rec)[0].1, rec.break_even[0].rewrite_chars), (ResultOutcome::Removed, 0));
    }
}
