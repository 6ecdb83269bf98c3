//! Mid-run checkpoints (docs/GUARD.md, same heading): at a `turn_end` of a long run, judge
//! the outputs the agent has moved past, before the run ends.
//!
//! For: which items a checkpoint may judge (eligibility: age, memo, recall
//! never), the batch gate, the break-even, and the plan of what passes them.
//! The requests, `finish`, the drafts and the record are the run-end pass's
//! (`pass::plan_items`, `pass::finish`), with the checkpoint's wording (a
//! `Run` with `mid_run`, see `decide`, `items`, `exchange`), phase `mid-run`
//! and `midRunChunkKeepThreshold`. Not for: when to call it (the extension
//! calls it at a completed `turn_end` whose assistant message has tool calls)
//! or running the requests.
//!
//! **The entry point** is [`plan`] (and [`plan_json`] over the boundary's
//! forms), then `pass::finish` / `pass::finish_json` on the plan's state.
//! [`Gates`] says which gates apply: [`Gates::MidRun`] is the regular one;
//! [`Gates::EveryEligible`] (issue 9 part 3, distilling before Pi compacts:
//! compaction rewrites everything anyway) drops the age gate, the batch and
//! the break-even and plans every eligible output and exchange. The
//! [`Gate`] figures say what the gates measured, for `/guard`.

use std::rc::Rc;

use serde::Serialize;
use serde_json::Value;

use crate::cache::{rewrite, Basis, BreakEven, Cache, Measured, Outlook, Rule};
use crate::entry::ContextEntry;
use crate::memo::{contains, judged_mid_run, removed_share};
use crate::outcome::Phase;
use crate::pass::plan::{requests_so_far, skipped};
use crate::pass::{
    choose, plan_items, weigh_judge, Choosing, Chosen, Items, PassInput, PassState, Plan, Planned, Skip,
};
use crate::run::Output;
use crate::scanned::Scanned;
use crate::worth::{self, later_requests};

/// Outputs of this tool are never judged mid-run: the model just asked for
/// them (in the original guard, judging them made models recall the same
/// entry again). At run end they are judged like other outputs.
pub const RECALL_TOOL: &str = "recall";

/// Which gates a checkpoint applies.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "CheckpointGates"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gates {
    /// The regular checkpoint: `midRun` on; outputs ≥ `midRunMinAgeTurns` turns old; the batch
    /// (`midRunBatchChars`, `midRunBatchCharsOpenAI` for `openai-codex`);
    /// the break-even when `midRunBreakEven`.
    #[default]
    MidRun,
    /// Every eligible output and exchange (the memo and the candidate rules
    /// still apply): no age gate, no batch, no break-even, `midRun` not read.
    EveryEligible,
}

impl Gates {
    pub fn parse(s: &str) -> Option<Gates> {
        match s {
            "mid-run" => Some(Gates::MidRun),
            "every-eligible" => Some(Gates::EveryEligible),
            _ => None,
        }
    }
}

/// What a checkpoint reads: the run-end pass's input (entries, settings,
/// classifier, main model, records) and its gates.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CheckpointInput {
    #[serde(flatten)]
    pub pass: PassInput,
    pub gates: Gates,
    /// Turns between the plan and the end of turn its edits land at:
    /// the judge works in the background, so the plan is made that many
    /// turns ahead, its age and turn gates lowered by as many, and its edits
    /// land where a waited-for checkpoint's would. 0 when the judge is waited for.
    pub lag: usize,
}

impl CheckpointInput {
    /// `PassInput`'s fields plus `gates` (`"mid-run"`, the default, or
    /// `"every-eligible"`; anything else reads as `"mid-run"`, the stricter).
    pub fn from_value(v: Value) -> CheckpointInput {
        // Read in place, not removed: `PassInput` ignores the key, and a
        // removal would bring the B-tree's removal code into the wasm.
        let gates = v.get("gates").and_then(Value::as_str).and_then(Gates::parse).unwrap_or_default();
        let lag = v.get("lag").and_then(Value::as_u64).map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
        CheckpointInput { pass: PassInput::from_value(v), gates, lag }
    }
}

crate::deserialize_via_value!(CheckpointInput);

/// What the gates measured (for `/guard`'s "skipped" line and the tests).
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "CheckpointGate", optional_fields))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gate {
    pub gates: Gates,
    /// Eligible items: large and small outputs, and exchanges.
    pub outputs: usize,
    pub exchanges: usize,
    /// Their characters together (the batch's "pending chars").
    pub pending_chars: usize,
    /// The batch they must reach (0 when not gated).
    pub batch_chars: usize,
    /// `midRunMinTurns` when the checkpoint came before it (else 0).
    pub min_turns: usize,
    /// Assistant messages of the run so far (the break-even's "turns so far").
    pub turns: usize,
    /// The break-even's factor (in tokens; 0 in money) and the rewrite it weighed (0 when not gated).
    pub factor: usize,
    pub rewrite_chars: usize,
    /// The money rule's figures (`worth`): characters expected to go, the
    /// later requests expected, the expected saving and the cost in
    /// millionths of a dollar (0 in tokens), and whether the room trigger let
    /// the batch through.
    pub expected_chars: usize,
    pub later: usize,
    pub gain_micros: usize,
    pub cost_micros: usize,
    pub room: bool,
    /// The whole batch failed the break-even and the outputs alone passed:
    /// the exchanges wait for run end.
    pub outputs_only: bool,
    /// A chat-model judge's least cost and its edits' most saving, in
    /// millionths of a dollar (`pass::weigh_judge`; 0 when not weighed).
    pub judge_cost_micros: usize,
    pub judge_saving_micros: usize,
    /// A run end's skip (`of_run_end`): `turns` are then the session's requests so far.
    pub run_end: bool,
    /// The main model's cache and where the weighed rewrite starts (absent
    /// when the break-even was not weighed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<Cache>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
}

impl Gate {
    /// Read back from its JSON form (`/guard` gets the last skip's figures
    /// from the extension): a missing or wrong-typed field reads as empty.
    pub fn from_value(v: Value) -> Gate {
        let mut f = crate::read::Fields::of(v);
        Gate {
            gates: Gates::parse(&f.string("gates")).unwrap_or_default(),
            outputs: f.count("outputs"),
            exchanges: f.count("exchanges"),
            pending_chars: f.count("pendingChars"),
            batch_chars: f.count("batchChars"),
            min_turns: f.count("minTurns"),
            turns: f.count("turns"),
            factor: f.count("factor"),
            rewrite_chars: f.count("rewriteChars"),
            expected_chars: f.count("expectedChars"),
            later: f.count("later"),
            gain_micros: f.count("gainMicros"),
            cost_micros: f.count("costMicros"),
            room: f.boolean("room"),
            outputs_only: f.boolean("outputsOnly"),
            judge_cost_micros: f.count("judgeCostMicros"),
            judge_saving_micros: f.count("judgeSavingMicros"),
            run_end: f.boolean("runEnd"),
            cache: Cache::parse(&f.string("cache")),
            basis: Basis::parse(&f.string("basis")),
        }
    }

    /// The figures of the decision that was weighed last.
    fn weighed(&mut self, d: &BreakEven) {
        (self.factor, self.rewrite_chars, self.basis) = (d.factor, d.rewrite_chars, Some(d.basis));
        (self.expected_chars, self.later, self.gain_micros, self.cost_micros, self.room) =
            (d.expected_chars, d.later, d.gain_micros, d.cost_micros, d.room);
    }
}

/// A checkpoint's plan (its `pass.phase` is `MidRun`) and what the gates measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    pub plan: Plan,
    pub gate: Gate,
}

/// One batch weighed (issue 20): the money rule over `outlook` (the
/// judge's cost for a chat model) where `money` allows it, else the room
/// trigger: past `midRunRoomTokens` of context (`context_tokens`), a batch
/// expected to take out at least `midRunRoomMinTokens` goes without it.
fn decide(
    outlook: &Outlook,
    context_tokens: usize,
    pending: usize,
    rewrite: Measured,
    p: &PassInput,
    money: bool,
) -> BreakEven {
    let s = &p.settings;
    let judge_micros = p.judge.map_or(0, |j| worth::micros_of(pending, j.input_per_million));
    let mut d = BreakEven {
        rule: Rule::Checkpoint,
        saved_chars: pending,
        factor: outlook.cache.checkpoint_factor(),
        rewrite_chars: rewrite.chars,
        basis: rewrite.basis,
        ..BreakEven::default()
    }
    .weigh(outlook, judge_micros);
    d.paid_off &= money;
    let roomy = s.mid_run_room_tokens > 0
        && context_tokens >= s.mid_run_room_tokens
        && d.expected_chars / 4 >= s.mid_run_room_min_tokens;
    if !d.paid_off && roomy {
        (d.room, d.paid_off) = (true, true);
    }
    d
}

/// The checkpoint's first step: the eligible items, the gates, then the
/// requests of what passed, planned as the run-end pass plans them. Finish
/// it with `pass::finish`.
pub fn plan(input: &CheckpointInput) -> Checkpoint {
    let p = &input.pass;
    let s = &p.settings;
    let mut gate = Gate { gates: input.gates, ..Gate::default() };
    let skip = |why: Skip, gate: Gate| Checkpoint { plan: skipped(s, why), gate };
    if !s.enabled {
        return skip(Skip::Off, gate);
    }
    if input.gates == Gates::MidRun && !s.mid_run {
        return skip(Skip::MidRunOff, gate);
    }
    if !p.classifier {
        return skip(Skip::NoClassifier, gate);
    }
    let entries = &p.entries;
    // What a pass would choose at this point, then the checkpoint's own gates over its outputs.
    let Some(Chosen { run, items, .. }) = choose(p, entries, Choosing::MidRun) else {
        return skip(Skip::NoRun, gate);
    };
    // Turn = assistant message of the run; an output's age is the turns
    // after the one that called it.
    let turn_at = turns_before(entries, run.prompt_index);
    gate.turns = turn_at.last().copied().unwrap_or(0);
    let age = |o: &Output| gate.turns.saturating_sub(turn_at.get(o.entry_index).copied().unwrap_or(0));
    let memo = judged_mid_run(&p.records);
    let eligible = |o: &Output| {
        o.tool != RECALL_TOOL
            && !contains(&memo, &o.entry_id)
            && (input.gates == Gates::EveryEligible || age(o) >= s.mid_run_min_age_turns.saturating_sub(input.lag))
    };
    let Items { mut large, mut small, mut exchanges } = items;
    large.retain(|o| eligible(o));
    small.retain(|x| eligible(&x.output));

    gate.outputs = large.len() + small.len();
    gate.exchanges = exchanges.len();
    let output_chars =
        large.iter().chain(small.iter().map(|o| &o.output)).fold(0usize, |a, o| a.saturating_add(o.chars));
    let exchange_chars = exchanges.iter().fold(0usize, |a, x| a.saturating_add(x.chars));
    gate.pending_chars = output_chars.saturating_add(exchange_chars);
    if gate.outputs + gate.exchanges == 0 {
        return skip(Skip::NothingEligible, gate);
    }

    let measure = rewrite(&p.model, entries);
    let requests_so_far = requests_so_far(entries);
    let cache = measure.cache();
    // The break-even decision, for the record (a skip is not recorded: its Gate says it).
    let mut decision = Vec::new();
    if input.gates == Gates::MidRun {
        gate.batch_chars =
            if cache == Cache::OpenAiCodex { s.mid_run_batch_chars_openai } else { s.mid_run_batch_chars };
        if gate.pending_chars < gate.batch_chars {
            return skip(Skip::BelowBatch, gate);
        }
        // Before turn `midRunMinTurns` only the room trigger lets a batch through.
        let early = gate.turns.saturating_add(input.lag) < s.mid_run_min_turns;
        if s.mid_run_break_even || early {
            gate.factor = cache.checkpoint_factor();
            gate.cache = Some(cache);
            let first_output =
                large.iter().chain(small.iter().map(|o| &o.output)).map(|o| o.entry_index).min().unwrap_or(usize::MAX);
            let first_exchange = exchanges.iter().map(|x| x.prompt_index).min().unwrap_or(usize::MAX);
            let outlook = Outlook {
                cache,
                prices: p.model.prices,
                requests: gate.turns,
                later: later_requests(s.later_requests, gate.turns, requests_so_far, &p.earlier_runs),
                share_permille: removed_share(p.records.iter().map(|r| &r.record)),
                lapsed: p.model.lapsed(),
            };
            // Pi's estimate of the context, or where Pi has none yet (no usage recorded), the measure's own.
            let context_tokens = if p.model.context_tokens > 0 { p.model.context_tokens } else { measure.whole() / 4 };
            let money = s.mid_run_break_even && !early;
            let all = decide(
                &outlook,
                context_tokens,
                gate.pending_chars,
                measure.measure(first_output.min(first_exchange)),
                p,
                money,
            );
            let mut chosen = all;
            if !all.paid_off {
                // Outputs alone rewrite less (an exchange comes before them); the exchanges wait for run end.
                let alone = decide(&outlook, context_tokens, output_chars, measure.measure(first_output), p, money);
                if gate.exchanges == 0 || gate.outputs == 0 || !alone.paid_off {
                    gate.weighed(&all);
                    if early {
                        gate.min_turns = s.mid_run_min_turns;
                        return skip(Skip::EarlyInRun, gate);
                    }
                    return skip(Skip::NotPayingOff, gate);
                }
                gate.outputs_only = true;
                gate.pending_chars = output_chars;
                exchanges.clear();
                chosen = alone;
            }
            gate.weighed(&chosen);
            decision.push(chosen);
        }
    }

    let planned = plan_items(Items { large, small, exchanges }, entries, &run, s, &measure, &[], &p.scanned);
    // The judge's break-even where the others apply: not for room before compacting.
    if input.gates == Gates::MidRun {
        if let Some(w) = weigh_judge(p.judge, &planned, requests_so_far) {
            (gate.judge_cost_micros, gate.judge_saving_micros) = (w.cost_micros, w.saving_micros);
            if w.cost_micros > w.saving_micros {
                return skip(Skip::JudgeNotWorthIt, gate);
            }
        }
    }
    // The user's settings as they are: `finish` decides by the phase (pass/finish.rs `deciding`:
    // the checkpoint's own chunk threshold, no cited files, no separate weighing of exchanges).
    let settings = s.clone();
    let count = planned.requests.len();
    Checkpoint {
        plan: Plan {
            requests: planned.requests,
            pass: PassState {
                phase: Phase::MidRun,
                settings,
                skipped: None,
                requests: count,
                answer: String::new(),
                outputs: planned.outputs,
                large_rewrite: planned.large_rewrite,
                small: planned.small,
                exchanges: planned.exchanges,
                withheld: planned.withheld,
                images: Vec::new(),
                requests_so_far,
                cache,
                prices: p.model.prices,
                lapsed: None,
                break_even: decision,
                judge: None,
                waiting: Vec::new(),
                late: None,
                at_plan: None,
            },
        },
        gate,
    }
}

/// For each entry index (and one past the end), the assistant messages of
/// the run before it: an output's call is in turn `turns_before[output]`,
/// and the last value is the run's turns so far.
fn turns_before(entries: &[ContextEntry], prompt_index: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(entries.len() + 1);
    let mut n = 0usize;
    for (i, e) in entries.iter().enumerate() {
        out.push(n);
        if i > prompt_index {
            n += e.replies();
        }
    }
    out.push(n);
    out
}

impl Gate {
    /// A run end whose judge was not worth calling, as a skip's gate for `/guard`.
    pub fn of_run_end(pass: &PassState) -> Option<Gate> {
        let w = pass.judge?;
        Some(Gate {
            run_end: true,
            turns: pass.requests_so_far,
            judge_cost_micros: w.cost_micros,
            judge_saving_micros: w.saving_micros,
            ..Gate::default()
        })
    }

    /// As JSON text, for the wasm crate (serde_json's writer instantiated
    /// there would be a second copy in the `.wasm`).
    pub fn to_json(&self) -> Result<String, String> {
        serde_json::to_string(self).map_err(|e| e.to_string())
    }
}

/// [`plan`] over the boundary's forms (`pass::plan_json`'s: the JSON of
/// [`CheckpointInput`] with long texts out of line); the [`Planned`] is
/// finished by `pass::finish_json` like a run-end pass's.
pub fn plan_json(input: &[u8], texts: &[u8], lengths: &[u32]) -> Result<(Planned, Gate), String> {
    plan_json_with(input, texts, lengths, &Rc::default())
}

/// [`plan_json`] with the secrets of outputs found when they arrived.
pub fn plan_json_with(
    input: &[u8],
    texts: &[u8],
    lengths: &[u32],
    scanned: &Rc<Scanned>,
) -> Result<(Planned, Gate), String> {
    let mut gate = Gate::default();
    let planned = crate::pass::plan_json_by(input, texts, lengths, &mut |v| {
        let mut input = CheckpointInput::from_value(v);
        input.pass.scanned = Rc::clone(scanned);
        let c = plan(&input);
        gate = c.gate;
        c.plan
    })?;
    Ok((planned, gate))
}

#[cfg(test)]
mod tests;
