//! A pass whose answers came after the boundary it was planned at
//! (docs/GUARD.md, "Nobody waits for the judge"): the judge works in the
//! background, and its edits land at a later `turn_end`,
//! `agent_before_settle` or a prompt's first request.
//!
//! For: checking the plan against the context as it is now and weighing the
//! later landing, before [`finish`](super::finish) writes the drafts. An
//! item whose entry is gone from the context (a compaction, a branch that
//! does not hold it), was edited meanwhile (a later checkpoint, another
//! extension) or is edited by another pass landing at the same boundary is
//! dropped: nothing is applied to it, nothing is recorded for it, and a
//! later pass may judge it again. The rest are measured again on
//! the current context: the cache rewrite starts where the edit lands now,
//! and a checkpoint expects fewer later requests by as many as went by, or
//! what its estimator gives where it lands when that is more.
//! Not for: whether the plan belongs to this branch at all (the extension
//! checks that the entry it was planned at is still an ancestor of the leaf)
//! or timing.

use crate::cache::{rewrite, Rule};
use crate::entry::{blocks_text, ContextEntry, Message};
use crate::outcome::Late;
use crate::run::{find_run, run_turns};
use crate::worth::later_requests;

use super::gate::later_by_index;
use super::plan::requests_so_far;
use super::{PassInput, PassState};

/// Checks and re-weighs `pass` against the context now (`input`), `ms` after
/// it was planned at the entry `anchor` (the last of the context it was
/// planned on); `in_request` when the edits go into a prompt's first request
/// through the `context` hook. Returns the ids of the items dropped.
///
/// The rewrite of each edit grows by what the context gained since: the
/// cached prefix it would have read from is still there (the requests
/// between read it), and the rewrite now runs to the new end. Where the
/// anchor is gone (a compaction), it is measured again on the context now.
pub fn land(pass: &mut PassState, input: &PassInput, anchor: &str, ms: f64, in_request: bool) -> Vec<String> {
    // Always from the plan: a pass landed again (its answers carried, see `Outcome::carry`) is not
    // measured twice.
    let carried = pass.late.map_or(0, |l| l.carried + 1);
    let planned = pass.at_plan.take().map_or_else(|| pass.clone(), |p| *p);
    *pass = planned.clone();
    pass.at_plan = Some(Box::new(planned));
    let entries = &input.entries;
    let gained = entries
        .iter()
        .position(|e| e.id == anchor)
        .map(|at| entries.iter().skip(at + 1).map(crate::cache::entry_chars).fold(0usize, usize::saturating_add));
    // The entries an edit may still target: there, and seen as their raw message (not edited since).
    let fresh = |e: &ContextEntry| e.raw.is_none() && !e.messages.is_empty();
    // Not those another pass edits at this boundary (`input.judging`): one edit an entry.
    let index = |id: &str| entries.iter().position(|e| e.id == id && fresh(e) && !input.judging.contains(&e.id));
    // The entries other passes' edits target at this boundary (`input.judging`, landed before this one):
    // from the first of them the context is written again anyway, so an edit adds only the rewrite before it.
    let co = entries.iter().position(|e| input.judging.contains(&e.id));
    // Measured again where the anchor is gone, or to take off what another landing rewrites.
    let measure = (gained.is_none() || co.is_some()).then(|| rewrite(&input.model, entries));
    let grown = |before: usize, i: usize| {
        let full = match (gained, &measure) {
            (Some(g), _) => before.saturating_add(g),
            (None, Some(m)) => m.from(i),
            (None, None) => before,
        };
        match (co, &measure) {
            (Some(c), Some(m)) => full.saturating_sub(m.from(c)),
            _ => full,
        }
    };
    let later = later_by_index(entries);
    let later_at = |i: usize| later.get(i).copied().unwrap_or(1);
    let mut dropped = Vec::new();

    let mut kept_rewrites = Vec::new();
    let old = std::mem::take(&mut pass.outputs);
    let before = std::mem::take(&mut pass.large_rewrite);
    for (k, mut o) in old.into_iter().enumerate() {
        match index(&o.entry_id).filter(|&i| same_text(entries, i, o.chars)) {
            Some(i) => {
                o.later = later_at(i);
                kept_rewrites.push(grown(before.get(k).copied().unwrap_or(0), i));
                pass.outputs.push(o);
            }
            None => dropped.push(o.entry_id),
        }
    }
    pass.large_rewrite = kept_rewrites;
    pass.small.retain_mut(|p| match index(&p.entry_id).filter(|&i| same_text(entries, i, p.chars)) {
        Some(i) => {
            (p.rewrite_chars, p.later) = (grown(p.rewrite_chars, i), later_at(i));
            true
        }
        None => {
            dropped.push(p.entry_id.clone());
            false
        }
    });
    pass.exchanges.retain_mut(|x| {
        let whole = x.omit_ids.iter().all(|id| index(id).is_some());
        match index(&x.prompt_id).filter(|_| whole) {
            Some(i) => {
                x.rewrite_chars = grown(x.rewrite_chars, i);
                true
            }
            None => {
                dropped.push(x.prompt_id.clone());
                false
            }
        }
    });
    pass.images.retain_mut(|im| match index(&im.entry_id) {
        Some(i) => {
            (im.entry_index, im.rewrite_chars) = (i, grown(im.rewrite_chars, i));
            true
        }
        None => {
            dropped.push(im.entry_id.clone());
            false
        }
    });
    pass.waiting.retain(|w| index(&w.entry_id).is_some());

    let now = requests_so_far(entries);
    let between = now.saturating_sub(pass.requests_so_far);
    // A checkpoint's estimate of the requests still to come: the plan's, less those that went by (they
    // carried the outputs whole), or the estimator's where it lands when that is more (a run that went on
    // is expected to go on longer: a checkpoint planned here would weigh that).
    let s = &input.settings;
    let here = find_run(entries, s)
        .map(|run| later_requests(s.later_requests, run_turns(entries, run.prompt_index), now, &input.earlier_runs));
    for d in pass.break_even.iter_mut().filter(|d| d.rule == Rule::Checkpoint) {
        d.later = d.later.saturating_sub(between).max(here.unwrap_or(0)).max(1);
    }
    (pass.requests_so_far, pass.cache, pass.prices) = (now, input.model.cache(), input.model.prices);
    pass.lapsed = input.model.lapsed();
    let ms = if ms.is_finite() { ms.max(0.0) } else { 0.0 };
    pass.late = Some(Late { requests: between, ms, in_request, carried });
    dropped
}

impl PassState {
    /// How many tool outputs the pass asks the judge about, then the entries
    /// it would edit (its outputs, its exchanges' prompts and what they omit,
    /// its images, the outputs it leaves waiting), one a line. Another plan
    /// leaves those alone while this one is out (`PassInput::judging`).
    pub fn held(&self) -> String {
        let mut out = (self.outputs.len() + self.small.len()).to_string();
        let mut add = |id: &str| {
            out.push('\n');
            out.push_str(id);
        };
        self.outputs.iter().for_each(|o| add(&o.entry_id));
        self.small.iter().for_each(|p| add(&p.entry_id));
        for x in &self.exchanges {
            add(&x.prompt_id);
            x.omit_ids.iter().for_each(|id| add(id));
        }
        self.images.iter().for_each(|im| add(&im.entry_id));
        self.waiting.iter().for_each(|w| add(&w.entry_id));
        out
    }
}

/// Whether entry `i` is a tool result whose visible text is still `chars` long.
fn same_text(entries: &[ContextEntry], i: usize, chars: usize) -> bool {
    matches!(entries.get(i).and_then(|e| e.messages.first()), Some(Message::ToolResult { content, .. })
        if crate::text::js_len(&blocks_text(content)) == chars)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::BreakEven;
    use crate::outcome::Draft;
    use crate::pass::tests::{answer_keeping, grep_text, input};
    use crate::pass::{finish, plan};
    use crate::testing::{call, entry, result, say};
    use serde_json::json;

    fn two_greps() -> PassInput {
        let out = |q: &str| ("bash", "", json!({"command": format!("rg -n {q}")}), grep_text(200));
        input(&[out("status"), out("state")])
    }

    /// `inp` after one more turn: a call and its 5,000-character output.
    fn one_turn_later(inp: &PassInput) -> PassInput {
        let mut now = inp.clone();
        now.entries.push(entry("a9", call("c9", "bash", json!({"command": "ls"}))));
        now.entries.push(entry("r9", result("c9", "bash", &"x".repeat(5000))));
        now
    }

    fn edited_targets(drafts: &[Draft]) -> Vec<String> {
        drafts
            .iter()
            .filter_map(|d| match d {
                Draft::ContextEdit { target_id, .. } => Some(target_id.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn unchanged_context_lands_as_planned() {
        let inp = two_greps();
        let p = plan(&inp);
        let answers = answer_keeping(&p, "src/f3.ts:");
        let mut state = p.pass.clone();
        assert!(land(&mut state, &inp, "end", 900.0, true).is_empty());
        let now = finish(&state, &answers);
        assert_eq!(edited_targets(&now.entries), edited_targets(&finish(&p.pass, &answers).entries));
        let late = now.record.unwrap().late.unwrap();
        assert_eq!((late.requests, late.ms, late.in_request), (0, 900.0, true));
    }

    #[test]
    fn an_output_edited_or_gone_meanwhile_is_dropped_and_left_whole() {
        let inp = two_greps();
        let p = plan(&inp);
        let answers = answer_keeping(&p, "src/f3.ts:");
        // r0 was edited by another pass; r1 left the context (a compaction); two more requests went by.
        let mut now = inp.clone();
        let r0 = now.entries.iter().position(|e| e.id == "r0").unwrap();
        now.entries[r0].raw = now.entries[r0].messages.first().cloned();
        now.entries[r0].messages = vec![result("c0", "bash", "[context-guard] distilled")];
        now.entries.retain(|e| e.id != "r1");
        now.entries.push(entry("a9", call("c9", "bash", json!({"command": "ls"}))));
        now.entries.push(entry("r9", result("c9", "bash", "a.txt")));
        now.entries.push(entry("end2", say("done")));
        let mut state = p.pass.clone();
        let mut dropped = land(&mut state, &now, "end", f64::NAN, false);
        dropped.sort();
        assert_eq!(dropped, ["r0", "r1"]);
        let out = finish(&state, &answers);
        assert!(edited_targets(&out.entries).is_empty(), "{:?}", out.entries);
        let rec = out.record.unwrap();
        assert!(rec.results.iter().all(|r| r.entry_id != "r0" && r.entry_id != "r1"));
        assert_eq!(rec.late.map(|l| (l.requests, l.ms)), Some((2, 0.0)));
    }

    #[test]
    fn a_later_landing_rewrites_what_the_context_gained_too() {
        let inp = two_greps();
        let p = plan(&inp);
        let now = one_turn_later(&inp);
        let gained: usize = now.entries[inp.entries.len()..].iter().map(crate::cache::entry_chars).sum();
        let mut state = p.pass.clone();
        land(&mut state, &now, "end", 0.0, false);
        let grew = |s: &PassState| -> Vec<usize> {
            s.large_rewrite.iter().zip(&p.pass.large_rewrite).map(|(a, b)| a - b).collect()
        };
        assert_eq!(grew(&state), vec![gained; 2]);
        // Landed again (carried): measured from the plan once more, not from the last landing.
        land(&mut state, &now, "end", 0.0, false);
        assert_eq!(grew(&state), vec![gained; 2]);
        assert_eq!(state.late.map(|l| (l.requests, l.carried)), Some((1, 1)));
        // Without the entry it was planned at (a compaction took it), measured again.
        let mut state = p.pass.clone();
        land(&mut state, &now, "gone", 0.0, false);
        assert_eq!(state.large_rewrite.len(), 2);
    }

    #[test]
    fn a_checkpoint_landing_later_expects_the_plans_requests_less_those_gone_or_the_estimators_there() {
        let inp = two_greps();
        let p = plan(&inp);
        // Two more turns of the same run went by.
        let mut now = inp.clone();
        for k in 0..2 {
            now.entries.push(entry(&format!("a{k}"), call(&format!("c{k}"), "bash", json!({"command": "ls"}))));
            now.entries.push(entry(&format!("r{k}x"), result(&format!("c{k}"), "bash", "a.txt")));
        }
        let turns = run_turns(&now.entries, find_run(&now.entries, &now.settings).unwrap().prompt_index);
        let landed = |later: usize| {
            let mut state = p.pass.clone();
            state.break_even = vec![BreakEven { rule: Rule::Checkpoint, later, ..BreakEven::default() }];
            land(&mut state, &now, "end", 0.0, false);
            state.break_even[0].later
        };
        assert!(turns < 20, "{turns}");
        // The plan expected 22: two went by, 20 are left.
        assert_eq!(landed(22), 20);
        // It expected 1: the run went on, and as many turns again as it has had are expected there
        // (`median` with no earlier runs).
        assert_eq!(landed(1), turns);
    }

    #[test]
    fn another_pass_editing_at_the_same_landing_leaves_only_the_rewrite_before_its_edit() {
        let inp = two_greps();
        let p = plan(&inp);
        let mut now = one_turn_later(&inp);
        let alone = {
            let mut state = p.pass.clone();
            land(&mut state, &now, "end", 0.0, false);
            state.large_rewrite
        };
        // Another pass's edit of r9 lands at this boundary first: the context is written again from r9 anyway.
        now.judging = vec!["r9".into()];
        let mut state = p.pass.clone();
        land(&mut state, &now, "end", 0.0, false);
        let r9 = now.entries.iter().position(|e| e.id == "r9").unwrap();
        let from_r9 = rewrite(&now.model, &now.entries).from(r9);
        assert!(from_r9 >= 5000, "{from_r9}");
        let less: Vec<usize> = alone.iter().map(|a| a - from_r9).collect();
        assert_eq!(state.large_rewrite, less);
        // An output that pass edits here is left alone: one edit an entry.
        now.judging = vec!["r0".into()];
        let mut state = p.pass.clone();
        assert_eq!(land(&mut state, &now, "end", 0.0, false), ["r0"]);
    }

    #[test]
    fn a_plan_leaves_alone_what_another_pass_is_judging() {
        let mut inp = two_greps();
        assert_eq!(plan(&inp).pass.outputs.len(), 2);
        inp.judging = vec!["r0".into()];
        let ids: Vec<String> = plan(&inp).pass.outputs.into_iter().map(|o| o.entry_id).collect();
        assert_eq!(ids, ["r1"]);
    }
}
