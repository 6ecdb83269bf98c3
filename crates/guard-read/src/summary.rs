//! The text `/guard` shows: whether the guard is on and can run, its model,
//! what it keeps out of the window, its classifier usage, the last break-even
//! decisions with their numbers, and the last pass's result for each kind of
//! item with the classifier's traces.
//!
//! For: wording and layout of that report, from figures computed elsewhere
//! (`stats`) and the records on the branch. Not for: computing savings or
//! reading settings.

use serde_json::Value;

use crate::cache::{Basis, BreakEven, Rule};
use crate::decimal::{fixed, whole};
use crate::guard::checkpoint::Gate;
use crate::guard::outcome::{Phase, Record, ResultKind};
use crate::kept::Stats;
use crate::stats::status_text;
use crate::text::{push_usize, sanitize_line, short_count};

/// What the report reads.
#[derive(Debug, Clone, Default)]
pub struct SummaryInput {
    /// `/guard details`: every line below; else the short first screen.
    pub details: bool,
    pub enabled: bool,
    /// `provider/id` of the configured classifier.
    pub model: String,
    /// Why the classifier cannot be used, when so (`Jev model not found`, `no openrouter key`).
    pub model_problem: Option<String>,
    pub settings_path: String,
    pub warnings: Vec<String>,
    pub mid_run: bool,
    pub prune_exchanges: bool,
    pub stats: Stats,
    /// `data` of every `context-guard` record on the branch, oldest first.
    pub records: Vec<Value>,
    pub core_version: String,
    pub core_load_ms: f64,
    /// The last distill-before-compacting decision of this session (`guard::compaction`), if any.
    pub before_compaction: Option<String>,
    /// The judge's work in the background now, and what last landed or was dropped (issue 27).
    pub background: Option<String>,
    /// The Anthropic cache pin's state and what it did on the last request (`guard/pin.ts`).
    pub cache_pin: Option<String>,
    /// The break-even decisions of this process's last pass that made any
    /// (a pass that only deferred appends no record); else the records say.
    pub last_break_even: Vec<BreakEven>,
    /// `midRunMinAgeTurns` and `midRunBatchChars`, for the checkpoints' line.
    pub mid_run_min_age_turns: usize,
    /// `midRunMinTurns` (0 in input from before it: not shown).
    pub mid_run_min_turns: usize,
    pub mid_run_batch_chars: usize,
    /// The money rule's switch, the room trigger and the estimator of later requests, for the same line.
    pub mid_run_break_even: bool,
    pub mid_run_room_tokens: usize,
    pub mid_run_room_min_tokens: usize,
    pub later_requests: String,
    /// The run lengths the `median` estimator has (`worth::later_requests`):
    /// this session's earlier runs and the project's saved sessions' runs,
    /// and what the extension says of the saved ones (still being read, or
    /// why they could not be), for the estimator's line. Read from the flat
    /// `earlierRunsSession`, `earlierRunsSaved` and `earlierRunsNote`.
    pub earlier_runs: Option<EarlierRuns>,
    /// The last checkpoint skipped since one last ran, in this process (nothing is appended for a skip).
    pub last_skip: Option<SkipNote>,
}

/// Where the `median` estimator's run lengths come from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EarlierRuns {
    pub session: usize,
    pub saved: usize,
    pub note: Option<String>,
}

impl EarlierRuns {
    /// The line `/guard` shows, such as `later requests: median of 37 earlier
    /// runs (this session 3, saved sessions 34)`, indented.
    fn line(&self) -> String {
        let n = self.session.saturating_add(self.saved);
        let mut out = String::from("  later requests: median of ");
        push_usize(&mut out, n);
        out.push_str(if n == 1 { " earlier run (this session " } else { " earlier runs (this session " });
        push_usize(&mut out, self.session);
        out.push_str(", saved sessions ");
        push_usize(&mut out, self.saved);
        out.push(')');
        if n == 0 {
            out.push_str(", so the turns so far");
        }
        if let Some(note) = self.note.as_deref().filter(|t| !t.is_empty()) {
            out.push_str("; ");
            out.push_str(&sanitize_line(note, 200));
        }
        out
    }
}

/// A skipped checkpoint: why, and what its gates measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkipNote {
    pub skipped: String,
    pub gate: Gate,
}

impl SkipNote {
    fn from_value(v: Value) -> Option<SkipNote> {
        let mut f = crate::read::Fields::of(v);
        let skipped = f.opt_string("skipped")?;
        Some(SkipNote { skipped, gate: Gate::from_value(f.take("gate")) })
    }

    /// The line `/guard` shows.
    fn line(&self) -> String {
        let g = &self.gate;
        let at = if g.run_end {
            format!("last run end skipped ({} requests so far)", g.turns)
        } else {
            format!("last checkpoint skipped (turn {})", g.turns)
        };
        match self.skipped.as_str() {
            "early-in-run" => format!(
                "{at}: early in the run: checkpoints start at turn {} (midRunMinTurns) unless past the room trigger",
                g.min_turns
            ),
            "below-batch" => format!(
                "{at}: below the batch, {} of {} chars eligible ({} output{}, {} old exchange{})",
                short_count(g.pending_chars),
                short_count(g.batch_chars),
                g.outputs,
                if g.outputs == 1 { "" } else { "s" },
                g.exchanges,
                if g.exchanges == 1 { "" } else { "s" }
            ),
            "not-paying-off" => {
                let place = match (g.cache, g.basis) {
                    (Some(cache), Some(basis)) => format!(" ({}, {})", cache.as_str(), basis_words(basis)),
                    // Notes from a core before the cache issue have neither.
                    _ => String::new(),
                };
                if g.gain_micros > 0 || g.cost_micros > 0 {
                    format!(
                        "{at}: not paying off: writing {} tokens again costs {}; expected to save {} over about {} more requests{place}",
                        // What is written again: the measure less what is expected to go (worth.rs).
                        short_count(g.rewrite_chars.saturating_sub(g.expected_chars) / 4),
                        dollars(g.cost_micros),
                        dollars(g.gain_micros),
                        g.later
                    )
                } else {
                    // In tokens (no catalog prices), or a note from before the money rule (no `later`).
                    let (chars, later) =
                        if g.later > 0 { (g.expected_chars, g.later) } else { (g.pending_chars, g.turns) };
                    format!(
                        "{at}: not paying off, {} chars × {} later requests < {} × {} chars of cache rewrite{place}",
                        short_count(chars),
                        later,
                        g.factor,
                        short_count(g.rewrite_chars)
                    )
                }
            }
            "judge-not-worth-it" => format!(
                "{at}: judge not worth it, at least ${} of judging > at most ${} saved",
                crate::decimal::fixed(g.judge_cost_micros as f64 / 1e6, 4),
                crate::decimal::fixed(g.judge_saving_micros as f64 / 1e6, 4)
            ),
            "nothing-eligible" => format!("{at}: nothing eligible (no output old enough and not judged mid-run yet)"),
            "no-classifier" => format!("{at}: no classifier to ask (the first line says why)"),
            other => format!("last checkpoint skipped: {}", sanitize_line(other, 40)),
        }
    }
}

impl SummaryInput {
    /// Read by hand like the guard's other inputs (`read`): a missing or
    /// wrong-typed field reads as empty.
    pub fn from_value(v: Value) -> SummaryInput {
        let mut f = crate::read::Fields::of(v);
        SummaryInput {
            details: f.boolean("details"),
            enabled: f.boolean("enabled"),
            model: f.string("model"),
            model_problem: f.opt_string("modelProblem"),
            settings_path: f.string("settingsPath"),
            warnings: f.list("warnings", |w| w.as_str().unwrap_or("").to_string()),
            mid_run: f.boolean("midRun"),
            prune_exchanges: f.boolean("pruneExchanges"),
            stats: Stats::from_value(f.take("stats")),
            records: f.list("records", |r| r),
            core_version: f.string("coreVersion"),
            core_load_ms: f.number("coreLoadMs").unwrap_or(0.0),
            before_compaction: f.opt_string("beforeCompaction"),
            background: f.opt_string("background"),
            cache_pin: f.opt_string("cachePin"),
            last_break_even: f.list("lastBreakEven", BreakEven::from_value).into_iter().flatten().collect(),
            mid_run_min_age_turns: f.count("midRunMinAgeTurns"),
            mid_run_min_turns: f.count("midRunMinTurns"),
            mid_run_batch_chars: f.count("midRunBatchChars"),
            mid_run_break_even: f.boolean("midRunBreakEven"),
            mid_run_room_tokens: f.count("midRunRoomTokens"),
            mid_run_room_min_tokens: f.count("midRunRoomMinTokens"),
            later_requests: f.string("laterRequests"),
            // Absent: not shown.
            earlier_runs: f.opt_count("earlierRunsSession").map(|session| EarlierRuns {
                session,
                saved: f.count("earlierRunsSaved"),
                note: f.opt_string("earlierRunsNote"),
            }),
            last_skip: SkipNote::from_value(f.take("lastSkip")),
        }
    }
}

crate::deserialize_via_value!(SummaryInput);

/// The `/guard` report, plain text, one fact a line.
pub fn summary(input: &SummaryInput) -> String {
    let s = &input.stats;
    let mut lines = Vec::new();
    let state = if !input.enabled {
        "off (/guard on turns it on)".to_string()
    } else if let Some(problem) = &input.model_problem {
        format!("on, but idle: {}", sanitize_line(problem, 80))
    } else {
        "on".to_string()
    };
    // The first line answers "does it save me money?" where the bill can (issue 28).
    match s.bill.as_ref().filter(|b| !b.answer.is_empty()) {
        Some(bill) if input.enabled && input.model_problem.is_none() => {
            lines.push(format!("context-guard: {state} — {}", bill.answer))
        }
        _ => lines.push(format!("context-guard: {state}")),
    }
    lines.push(format!("  model: {}", sanitize_line(&input.model, 100)));
    let d = input.details;
    if d {
        lines.push(format!("  settings: {}", sanitize_line(&input.settings_path, 200)));
    }
    for w in &input.warnings {
        lines.push(format!("  warning: {}", sanitize_line(w, 200)));
    }
    // The same text as the status bar, the bill's two words in place of the items where it has prices.
    let status = status_text(s, s.bill.as_ref().map_or("", |b| b.short.as_str()));
    lines.push(format!(
        "  kept out of the window now: ~{} tokens ({} chars) by {} item{}   [{}]",
        short_count(s.saved_chars.div_ceil(4)),
        short_count(s.saved_chars),
        s.items,
        if s.items == 1 { "" } else { "s" },
        status.text
    ));
    lines.push(format!(
        "  on this branch in all: ~{} tokens ({} chars){}",
        short_count(s.lifetime_chars.div_ceil(4)),
        short_count(s.lifetime_chars),
        if s.compacted { ", some of it before a compaction" } else { "" }
    ));
    let records: Vec<Record> = input.records.iter().filter_map(Record::from_value).collect();
    // The judge's work in the background (issue 27), on both screens.
    let background = input.background.as_ref().map(|line| format!("  in the background: {}", sanitize_line(line, 240)));
    if !d {
        // The short screen (issue 28): the last pass in one sentence, the work in the background, the way on.
        if let Some(r) = records.last() {
            lines.push(format!(
                "  last pass: the {} kept out {} chars of {} item{} ({} ms)",
                phase_words(r.phase),
                short_count(r.saved_chars),
                r.results.len(),
                if r.results.len() == 1 { "" } else { "s" },
                whole(r.ms.max(0.0).round())
            ));
        }
        lines.extend(background);
        lines.push("  more: /guard details (the judge's usage, the bill's parts, settings, each item's result)".into());
        return crate::text::join(&lines, "\n");
    }
    lines.push(format!(
        "  the judge was asked at {} run end{} and {} mid-run checkpoint{}: {} request{}, {} input tokens, ${}",
        s.runs,
        if s.runs == 1 { "" } else { "s" },
        s.checkpoints,
        if s.checkpoints == 1 { "" } else { "s" },
        s.requests,
        if s.requests == 1 { "" } else { "s" },
        short_count(s.input_tokens.max(0.0) as usize),
        fixed(s.cost_usd.max(0.0), 4)
    ));
    if let Some(bill) = &s.bill {
        lines.push(format!("  net effect on the main model's bill so far: {}", bill.line));
    }
    lines.push(format!(
        "  old exchanges: {}; mid-run checkpoints: {}",
        if input.prune_exchanges { "pruned when unrelated" } else { "kept" },
        if input.mid_run {
            let mut on = format!(
                "on ({}outputs at least {} turn{} old, in batches of {} chars",
                if input.mid_run_min_turns > 1 {
                    format!("from turn {}, ", input.mid_run_min_turns)
                } else {
                    String::new()
                },
                input.mid_run_min_age_turns,
                if input.mid_run_min_age_turns == 1 { "" } else { "s" },
                short_count(input.mid_run_batch_chars)
            );
            if input.mid_run_break_even && !input.later_requests.is_empty() {
                on.push_str("; when they pay off over the later requests expected (");
                on.push_str(&sanitize_line(&input.later_requests, 20));
                on.push(')');
            }
            if input.mid_run_room_tokens > 0 {
                on.push_str(&format!(
                    ", or past {} tokens of context when a batch takes out {}",
                    short_count(input.mid_run_room_tokens),
                    short_count(input.mid_run_room_min_tokens)
                ));
            }
            on.push(')');
            on
        } else {
            "off".to_string()
        }
    ));
    if let Some(runs) = input.earlier_runs.as_ref().filter(|_| input.mid_run && input.later_requests == "median") {
        lines.push(runs.line());
    }
    if let Some(skip) = &input.last_skip {
        lines.push(format!("  {}", skip.line()));
    }
    // The last break-even decisions of each rule: this process's last pass
    // where it made some, else the last record that holds some (a skipped
    // checkpoint's is the line above).
    let passes = std::iter::once(&input.last_break_even).chain(records.iter().rev().map(|r| &r.break_even));
    let mut decisions: Vec<&BreakEven> = Vec::new();
    for list in passes {
        let new = |b: &&BreakEven| !decisions.iter().any(|d| d.rule == b.rule);
        let add: Vec<&BreakEven> = list.iter().filter(new).collect();
        decisions.extend(add);
    }
    for b in decisions {
        lines.push(format!("  {}", break_even_line(b)));
    }
    // What the last pass that withheld anything kept from the judge (issue 18): counts, never values.
    if let Some(w) = records.iter().rev().find(|r| !r.withheld.is_empty()).map(|r| &r.withheld) {
        lines.push(format!("  {}", withheld_line(w)));
    }
    // The last checkpoint in full (every kind), then the last pass of each kind not already shown.
    let checkpoint = records.iter().rposition(|r| r.phase == Phase::MidRun);
    if let Some(record) = checkpoint.and_then(|i| records.get(i)) {
        lines.push(format!(
            "  last mid-run checkpoint ({} ms{}, {} request{}, {} chars kept out):",
            whole(record.ms.max(0.0).round()),
            if record.timed_out { ", timed out" } else { "" },
            record.requests,
            if record.requests == 1 { "" } else { "s" },
            short_count(record.saved_chars)
        ));
        for r in &record.results {
            lines.push(result_line(r));
        }
    }
    for kind in [ResultKind::Large, ResultKind::Small, ResultKind::Exchange, ResultKind::Image] {
        let Some(at) = records.iter().rposition(|r| r.results.iter().any(|x| x.kind == kind)) else {
            continue;
        };
        if Some(at) == checkpoint {
            continue;
        }
        let Some(record) = records.get(at) else { continue };
        lines.push(format!(
            "  last {} ({}, {} ms{}):",
            kind_name(kind),
            phase_words(record.phase),
            whole(record.ms.max(0.0).round()),
            if record.timed_out { ", timed out" } else { "" }
        ));
        for r in record.results.iter().filter(|x| x.kind == kind) {
            lines.push(result_line(r));
        }
    }
    if !records.is_empty() {
        // The judge's traces in words (issue 28): each internal name beside its meaning.
        lines.push("  traces: kw = how sure the judge is the whole output is needed; focus = the part it points to, how sure; keep = parts kept / all".into());
    }
    lines.extend(background);
    if let Some(line) = &input.before_compaction {
        // Kept by the extension for the session: when the edits could not keep
        // Pi under its threshold nothing is appended, so no record says why.
        lines.push(format!("  {}", sanitize_line(line, 240)));
    }
    if let Some(line) = &input.cache_pin {
        lines.push(format!("  cache pin: {}", sanitize_line(line, 200)));
    }
    lines.push(format!("  core {} (wasm loaded in {} ms)", input.core_version, fixed(input.core_load_ms.max(0.0), 1)));
    crate::text::join(&lines, "\n")
}

/// `withheld from the judge: 3 secrets (aws-access-key 2, jwt 1); not sent: read `.env` (a secret file)`.
fn withheld_line(w: &crate::guard::withhold::Withheld) -> String {
    let mut parts = Vec::new();
    let n = w.secrets();
    if n > 0 {
        let kinds: Vec<String> = w.kinds.iter().map(|(k, c)| format!("{} {c}", sanitize_line(k, 40))).collect();
        parts.push(format!(
            "{n} secret{} as placeholders ({})",
            if n == 1 { "" } else { "s" },
            crate::text::join(&kinds, ", ")
        ));
    }
    if !w.files.is_empty() {
        let shown: Vec<String> = w.files.iter().take(3).map(|f| sanitize_line(f, 60)).collect();
        let more = w.files.len().saturating_sub(3);
        parts.push(format!(
            "not sent, as {} that print{} secrets: {}{}",
            if w.files.len() == 1 { "a file or command" } else { "files or commands" },
            if w.files.len() == 1 { "s" } else { "" },
            crate::text::join(&shown, ", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        ));
    }
    format!("withheld from the judge in the last pass that held any: {}", crate::text::join(&parts, "; "))
}

/// Where a rewrite starts, in words.
fn basis_words(b: Basis) -> &'static str {
    match b {
        Basis::Whole => "whole context",
        Basis::ReadPoint => "after read point",
        Basis::Question => "after question",
        Basis::FirstEdit => "from the first edit",
    }
}

/// An idle time in whole minutes (`10 min`), or hours and minutes from an hour (`1 h 5 min`).
fn idle_words(ms: usize) -> String {
    let minutes = ms / 60_000;
    match (minutes / 60, minutes % 60) {
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m} min"),
    }
}

/// Millionths of a dollar as Pi's footer writes money: `$0.117`.
fn dollars(micros: usize) -> String {
    format!("${}", crate::decimal::fixed(micros as f64 / 1e6, 3))
}

/// A break-even decision and its numbers, one line. In money:
/// `break-even: checkpoint 60.2k pending, 36.1k expected to go: saves $0.081 over ~10 later requests < $0.117 to write 31.2k tokens again (anthropic, after question) → skipped`;
/// in tokens (no catalog prices), or a decision from before the money rule:
/// `break-even: exchanges 9.1k saved × 4 later requests < 16 × 38.2k rewrite (anthropic, after read point) → deferred`.
fn break_even_line(b: &BreakEven) -> String {
    let checkpoint = b.rule == Rule::Checkpoint;
    let what = if checkpoint { "pending" } else { "saved" };
    let place = format!("({}, {})", b.cache.as_str(), basis_words(b.basis));
    let mut line = if b.lapsed_ms > 0 {
        // Weighed on a cold cache (`MainModel::lapsed`): the next request writes everything anyway.
        let mut l = format!(
            "break-even: {} {} {what}: cache lapsed after {} idle, nothing written again for it",
            b.rule.as_str(),
            short_count(b.saved_chars),
            idle_words(b.lapsed_ms)
        );
        if b.in_money() {
            l.push_str(&format!("; saves {} over ~{} later requests", dollars(b.gain_micros), b.later));
        }
        l.push_str(&format!(" ({})", b.cache.as_str()));
        l
    } else if b.room {
        format!(
            "break-even: {} {} {what}, {} expected to go: past the room trigger, the money rule not weighed {place}",
            b.rule.as_str(),
            short_count(b.saved_chars),
            short_count(b.expected_chars)
        )
    } else if b.in_money() {
        format!(
            "break-even: {} {} {what}, {} expected to go: saves {} over ~{} later requests {} {} to write {} tokens again {place}",
            b.rule.as_str(),
            short_count(b.saved_chars),
            short_count(b.expected_chars),
            dollars(b.gain_micros),
            b.later,
            if b.gain_micros >= b.cost_micros { "≥" } else { "<" },
            dollars(b.cost_micros),
            short_count(b.rewrite_chars.saturating_sub(b.expected_chars) / 4)
        )
    } else {
        // A decision from before the money rule has no `later`: its requests (or turns) so far stood in.
        let (chars, later) = if b.later > 0 { (b.expected_chars, b.later) } else { (b.saved_chars, b.requests) };
        format!(
            "break-even: {} {} {what} × {} later requests {} {} × {} rewrite {place}",
            b.rule.as_str(),
            short_count(chars),
            later,
            if chars.saturating_mul(later) >= b.rewrite_chars.saturating_mul(b.factor) { "≥" } else { "<" },
            b.factor,
            short_count(b.rewrite_chars)
        )
    };
    if b.rewrite_chars > 0 && b.saved_chars < b.min_saving_chars {
        line.push_str(", under the ");
        line.push_str(&short_count(b.min_saving_chars));
        line.push_str(" minimum");
    }
    line.push_str(match (b.paid_off, checkpoint) {
        (true, _) => " → paid off",
        (false, true) => " → skipped",
        (false, false) => " → deferred",
    });
    line
}

/// One result with its trace.
fn result_line(r: &crate::guard::outcome::ResultRecord) -> String {
    format!(
        "    {} {}: {} → {} chars ({}) {}",
        r.outcome.as_str(),
        sanitize_line(&r.label, 60),
        short_count(r.before_chars),
        short_count(r.after_chars),
        reason_words(&r.reason),
        sanitize_line(&r.jev, 80)
    )
}

/// A result's reasons, each code beside its meaning (issue 28): `chunks = kept
/// the parts the judge chose; none-needed = none of it needed`.
fn reason_words(reasons: &str) -> String {
    let parts: Vec<String> = reasons
        .split(',')
        .filter(|code| !code.is_empty())
        .map(|code| match reason_meaning(code) {
            Some(words) => format!("{code} = {words}"),
            None => sanitize_line(code, 40),
        })
        .collect();
    crate::text::join(&parts, "; ")
}

/// What a result's reason code means, in words; `None` for a reason that is
/// already words (an image's `3 turns old`).
fn reason_meaning(code: &str) -> Option<&'static str> {
    Some(match code {
        "error" => "the judge's request failed, kept",
        "timeout" => "no answer in time, kept",
        "no-answer" => "the answer was missing or malformed, kept",
        "whole-needed" => "the judge needs all of it",
        "whole-chosen" => "the judge pointed at all of it",
        "weak-whole" => "no part stood out, all kept",
        "weak-none" => "no part stood out and nothing to fall back on, all kept",
        "none-needed" => "none of it needed",
        "chunks" => "kept the parts the judge chose",
        "top-focus" => "kept the one part the judge pointed to",
        "oversize" => "a part too large to send, kept",
        "not-worth" => "the edit would save too little",
        "bad-plan" => "the plan did not fit the text, kept",
        "needed" => "the judge says the work needs it",
        "not-needed" => "the judge says the work no longer needs it",
        "related" => "related to the work now",
        "unrelated" => "unrelated to the work now",
        "deferred" => "waits until the edit pays off",
        _ => return None,
    })
}

/// A record's phase as `/guard` words it.
fn phase_words(phase: Phase) -> &'static str {
    match phase {
        Phase::RunEnd => "run end",
        Phase::MidRun => "mid-run checkpoint",
    }
}

fn kind_name(kind: ResultKind) -> &'static str {
    match kind {
        ResultKind::Large => "large outputs",
        ResultKind::Small => "small outputs",
        ResultKind::Exchange => "old exchanges",
        ResultKind::Image => "old images",
    }
}

/// The report from the JSON text of a `SummaryInput`.
pub fn summary_json(input: &str) -> Result<String, String> {
    let input =
        crate::read::from_json(input, SummaryInput::from_value).map_err(|e| format!("guard summary input: {e}"))?;
    Ok(summary(&input))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The details screen (`/guard details`), which most tests here read.
    fn summary(input: &SummaryInput) -> String {
        super::summary(&SummaryInput { details: true, ..input.clone() })
    }

    /// A run end that distilled one search.
    fn one_run_end() -> Value {
        json!({"v":1,"phase":"run-end","model":"fakejev/jev-test","savedChars":30000,"requests":2,
            "inputTokens":9000.0,"costUsd":0.0004,"ms":412.0,"timedOut":false,"results":[
            {"kind":"large","entryId":"a1","tool":"bash","label":"bash `rg -n status`","outcome":"distilled",
             "reason":"chunks","beforeChars":36100,"afterChars":6100,"jev":"kw.05 focus=chunk_2:.70 keep 3/12"}]})
    }

    #[test]
    fn the_first_screen_is_short_and_points_to_the_details() {
        let record = one_run_end();
        let input = SummaryInput {
            enabled: true,
            model: "fakejev/jev-test".into(),
            settings_path: "/home/u/.pi/agent/context-guard.json".into(),
            mid_run: true,
            stats: Stats { saved_chars: 30_000, items: 1, lifetime_chars: 30_000, runs: 1, ..Stats::default() },
            records: vec![record],
            background: Some("judging 2 outputs".into()),
            core_version: "0.1.0".into(),
            ..SummaryInput::default()
        };
        let short = super::summary(&input);
        assert!(short.starts_with("context-guard: on\n  model: fakejev/jev-test\n"), "{short}");
        assert!(short.contains("\n  last pass: the run end kept out 30.0k chars of 1 item (412 ms)\n"), "{short}");
        assert!(short.contains("\n  in the background: judging 2 outputs\n"), "{short}");
        assert!(short
            .ends_with("\n  more: /guard details (the judge's usage, the bill's parts, settings, each item's result)"));
        for detail in ["kw.05", "focus=", "settings:", "classifier:", "mid-run checkpoints:", "core 0.1.0"] {
            assert!(!short.contains(detail), "{detail} in {short}");
        }
        let full = summary(&input);
        assert!(full.contains("kw.05 focus=chunk_2:.70 keep 3/12") && full.contains("  settings: /home/u/"), "{full}");
        assert!(!full.contains("more: /guard details"), "{full}");
    }

    #[test]
    fn shows_state_usage_and_the_last_pass_per_kind() {
        let record = one_run_end();
        let input = SummaryInput {
            enabled: true,
            model: "fakejev/jev-test".into(),
            stats: Stats {
                saved_chars: 30_000,
                items: 1,
                lifetime_chars: 30_000,
                runs: 1,
                requests: 2,
                ..Stats::default()
            },
            records: vec![record, json!({"garbage": true})],
            core_version: "0.1.0".into(),
            ..SummaryInput::default()
        };
        let text = summary(&input);
        assert!(text.starts_with("context-guard: on\n"), "{text}");
        assert!(text.contains("[🛡 −7.5k tok · 1 item]"), "{text}");
        assert!(text.contains("last large outputs (run end, 412 ms):"), "{text}");
        assert!(
            text.contains(
                "distilled bash `rg -n status`: 36.1k → 6.1k chars (chunks = kept the parts the judge chose) kw.05 focus=chunk_2:.70 keep 3/12"
            ),
            "{text}"
        );
        assert!(!text.contains("small outputs ("), "{text}");
        // Each internal name of a trace beside its meaning, once (issue 28).
        assert_eq!(
            text.matches("\n  traces: kw = how sure the judge is the whole output is needed; focus = ").count(),
            1
        );
        assert!(!summary(&SummaryInput::default()).contains("traces:"), "no trace, no legend");
        let skip = SummaryInput::from_value(json!({"lastSkip": {"skipped": "no-classifier", "gate": {"turns": 4}}}));
        assert!(
            summary(&skip).contains("last checkpoint skipped (turn 4): no classifier to ask (the first line says why)")
        );
    }

    #[test]
    fn shows_the_bill_the_extension_computed_and_nothing_without_it() {
        use context_guard_economics::bill::{bill, BillInput, Catalog, Event, Usage};
        let request =
            |read: f64, write: f64| Event::Request(Usage { cache_read: read, cache_write: write, ..Usage::default() });
        let events = vec![
            request(0.0, 10_000.0),
            Event::Record { kept_chars: 8_000.0, cost_usd: 0.0, opening: false, lapsed: false },
            request(4_000.0, 5_000.0),
        ];
        let catalog = Catalog { input: 3.0, cache_read: 0.3, cache_write: 3.75 };
        let b = bill(&BillInput { events, catalog: Some(catalog) });
        // Read back as the extension hands it over, inside the figures.
        let stats = json!({ "runs": 1, "bill": serde_json::to_value(&b).unwrap() });
        let input = SummaryInput::from_value(json!({ "enabled": true, "stats": stats }));
        let text = summary(&input);
        assert!(text.contains(&format!("\n  net effect on the main model's bill so far: {}\n", b.line)), "{text}");
        assert!(b.line.starts_with("lost ~$0.0132 (est. from Pi's recorded usage"), "{}", b.line);
        // The first line answers the question, in dollars (issue 28).
        assert!(
            text.starts_with("context-guard: on — cost $0.01 more on this session's bill so far (est.)\n"),
            "{text}"
        );
        let input = SummaryInput::from_value(json!({ "enabled": true, "stats": { "runs": 1 } }));
        let text = summary(&input);
        assert!(!text.contains("net effect") && text.starts_with("context-guard: on\n"), "{text}");
    }

    #[test]
    fn shows_the_last_checkpoint_and_why_one_was_skipped() {
        let record = |phase: &str, id: &str| {
            json!({"v":1,"phase":phase,"model":"m","savedChars":22000,"requests":3,"inputTokens":1.0,"costUsd":0.0,
                "ms":640.0,"timedOut":false,"results":[
                {"kind":"large","entryId":id,"tool":"bash","label":"bash `npm test`","outcome":"distilled",
                 "reason":"chunks","beforeChars":30164,"afterChars":8163,"jev":"kw.05 focus=chunk_2:.70 keep 3/12"},
                {"kind":"small","entryId":"s1","tool":"read","label":"read `a.ts`","outcome":"removed",
                 "reason":"not-needed","beforeChars":3386,"afterChars":145,"jev":"p.19"}]})
        };
        let input = SummaryInput::from_value(json!({
            "enabled": true, "midRun": true, "midRunMinAgeTurns": 4, "midRunBatchChars": 60000,
            "stats": {"checkpoints": 1, "runs": 1},
            "records": [record("mid-run", "r1"), record("run-end", "r9")],
            "lastSkip": {"skipped": "not-paying-off", "gate": {"outputs": 4, "exchanges": 0, "pendingChars": 80000,
                "batchChars": 60000, "turns": 8, "factor": 16, "rewriteChars": 80533}}
        }));
        let text = summary(&input);
        assert!(text.contains("asked at 1 run end and 1 mid-run checkpoint:"), "{text}");
        assert!(
            text.contains("mid-run checkpoints: on (outputs at least 4 turns old, in batches of 60.0k chars)"),
            "{text}"
        );
        assert!(
            text.contains("  last checkpoint skipped (turn 8): not paying off, 80.0k chars × 8 later requests < 16 × 80.5k chars of cache rewrite"),
            "{text}"
        );
        assert!(text.contains("  last mid-run checkpoint (640 ms, 3 requests, 22.0k chars kept out):\n    distilled bash `npm test`: 30.2k → 8.2k chars (chunks = kept the parts the judge chose) kw.05"), "{text}");
        assert!(text.contains("    removed read `a.ts`: 3.4k → 145 chars (not-needed = the judge says the work no longer needs it) p.19"), "{text}");
        assert!(text.contains("last large outputs (run end, 640 ms):"), "{text}");
        assert!(!text.contains("not in this version"), "{text}");
        let below = SummaryInput::from_value(json!({"lastSkip": {"skipped": "below-batch", "gate": {"outputs": 1,
            "pendingChars": 20000, "batchChars": 60000, "turns": 5}}}));
        assert!(summary(&below).contains("last checkpoint skipped (turn 5): below the batch, 20.0k of 60.0k chars eligible (1 output, 0 old exchanges)"));
        let none = SummaryInput::from_value(json!({"lastSkip": {"skipped": "nothing-eligible", "gate": {"turns": 3}}}));
        assert!(summary(&none).contains("last checkpoint skipped (turn 3): nothing eligible"));
        assert!(summary(&SummaryInput::from_value(json!({"midRun": false}))).contains("mid-run checkpoints: off"));
        // A judge that costs more than its edits save: the skip with its numbers, a checkpoint's and a run end's
        // (`Gate::of_run_end`, from the weighing `pass::plan` keeps when it sent nothing).
        let g = Gate { turns: 40, judge_cost_micros: 20_512, judge_saving_micros: 16_000, ..Gate::default() };
        let note = json!({"details": true, "lastSkip": {"skipped": "judge-not-worth-it", "gate": serde_json::to_value(&g).unwrap()}});
        assert!(super::summary(&SummaryInput::from_value(note)).contains(
            "last checkpoint skipped (turn 40): judge not worth it, at least $0.0205 of judging > at most $0.0160 saved\n"
        ));
        let w = crate::guard::pass::JudgeWeighed { cost_micros: 160_000, saving_micros: 14_400 };
        let pass = crate::guard::pass::PassState { judge: Some(w), requests_so_far: 3, ..Default::default() };
        let g = Gate::of_run_end(&pass).unwrap();
        let note = json!({"details": true, "lastSkip": {"skipped": "judge-not-worth-it", "gate": serde_json::to_value(&g).unwrap()}});
        assert!(super::summary(&SummaryInput::from_value(note)).contains(
            "last run end skipped (3 requests so far): judge not worth it, at least $0.1600 of judging > at most $0.0144 saved\n"
        ));
    }

    #[test]
    fn says_how_many_earlier_runs_the_median_has() {
        let with = |later: &str, session: usize, saved: usize, note: Option<&str>| {
            summary(&SummaryInput::from_value(json!({"midRun": true, "laterRequests": later,
                "earlierRunsSession": session, "earlierRunsSaved": saved, "earlierRunsNote": note})))
        };
        let text = with("median", 3, 34, None);
        assert!(
            text.contains("\n  later requests: median of 37 earlier runs (this session 3, saved sessions 34)\n"),
            "{text}"
        );
        let text = with("median", 0, 0, Some("saved sessions still being read"));
        assert!(
            text.contains("later requests: median of 0 earlier runs (this session 0, saved sessions 0), so the turns so far; saved sessions still being read"),
            "{text}"
        );
        assert!(with("median", 1, 0, None).contains("median of 1 earlier run (this"));
        // Another estimator does not read them; nor does anything without checkpoints or without the figures.
        assert!(!with("turns", 3, 34, None).contains("later requests:"));
        let off = json!({"laterRequests": "median", "earlierRunsSession": 3, "earlierRunsSaved": 1});
        assert!(!summary(&SummaryInput::from_value(off)).contains("later requests:"));
        assert!(!summary(&SummaryInput::from_value(json!({"midRun": true, "laterRequests": "median"})))
            .contains("later requests:"));
    }

    #[test]
    fn says_why_it_is_idle_and_sanitizes() {
        let input = SummaryInput {
            enabled: true,
            model: "x/\x1b[31my".into(),
            model_problem: Some("no x key".into()),
            ..SummaryInput::default()
        };
        let text = summary(&input);
        assert!(text.starts_with("context-guard: on, but idle: no x key"));
        assert!(!text.contains('\x1b'));
        assert!(!text.contains("before Pi compacts"));
        assert!(summary_json("{").is_err());
        assert!(summary_json("{}").is_ok());
    }

    #[test]
    fn says_why_it_let_pi_compact() {
        let input = SummaryInput::from_value(json!({ "enabled": true,
            "beforeCompaction": "before Pi compacts: its estimate 205.1k > threshold 183.6k; the checkpoint gave no edits (timeout), so nothing is appended and Pi compacts\u{1b}" }));
        let text = summary(&input);
        assert!(
            text.contains("\n  before Pi compacts: its estimate 205.1k > threshold 183.6k; the checkpoint gave no edits (timeout), so nothing is appended and Pi compacts\n"),
            "{text}"
        );
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn shows_the_cache_pin_line() {
        let text = summary(&SummaryInput::from_value(
            json!({ "enabled": true, "cachePin": "on; last request: question + read point" }),
        ));
        assert!(text.contains("\n  cache pin: on; last request: question + read point\n"), "{text}");
        assert!(!summary(&SummaryInput::default()).contains("cache pin"));
    }

    #[test]
    fn shows_the_last_break_even_decisions_with_their_numbers() {
        let record = |break_even: Value| {
            json!({"v":1,"phase":"run-end","model":"m","savedChars":0,"requests":1,"inputTokens":1.0,"costUsd":0.0,
                "ms":5.0,"timedOut":false,"results":[],"breakEven": break_even})
        };
        let exchanges = json!({"rule": "exchanges", "savedChars": 9100, "requests": 4, "factor": 16,
            "rewriteChars": 38200, "minSavingChars": 8000, "cache": "anthropic", "basis": "read-point", "paidOff": false});
        let images = json!({"rule": "images", "savedChars": 6426, "requests": 17, "factor": 16,
            "rewriteChars": 6605, "minSavingChars": 0, "cache": "prefix", "basis": "first-edit", "paidOff": true});
        let older = json!({"rule": "checkpoint", "savedChars": 80000, "requests": 40, "factor": 16,
            "rewriteChars": 84341, "cache": "prefix", "basis": "first-edit", "paidOff": true});
        let input = SummaryInput::from_value(json!({"records": [
            record(json!([older])), record(json!([exchanges, images])),
            // A record from before the field, and one with a decision that is not one: read as none.
            record(Value::Null), record(json!([{"rule": "?"}]))
        ]}));
        let text = summary(&input);
        assert!(
            text.contains("\n  break-even: exchanges 9.1k saved × 4 later requests < 16 × 38.2k rewrite (anthropic, after read point) → deferred\n  break-even: images 6.4k saved × 17 later requests ≥ 16 × 6.6k rewrite (prefix, from the first edit) → paid off\n"),
            "{text}"
        );
        // Each rule's last decision: the checkpoint's is in an older record.
        assert!(text.contains("\n  break-even: checkpoint 80.0k pending"), "{text}");
        let newer = json!({"rule": "exchanges", "savedChars": 12000, "requests": 9, "factor": 16,
            "rewriteChars": 1000, "minSavingChars": 8000, "cache": "anthropic", "basis": "read-point", "paidOff": true});
        let input = SummaryInput::from_value(json!({"records": [record(json!([exchanges])), record(json!([newer]))]}));
        assert!(!summary(&input).contains("exchanges 9.1k"), "only the last of a rule");
        // This process's last pass (which may have appended nothing) comes before the records.
        let input =
            SummaryInput::from_value(json!({"records": [record(json!([exchanges]))], "lastBreakEven": [older, newer]}));
        let text = summary(&input);
        assert!(text.contains("\n  break-even: checkpoint 80.0k pending × 40 later requests ≥ 16 × 84.3k rewrite (prefix, from the first edit) → paid off\n"), "{text}");
        assert!(text.contains("break-even: exchanges 12.0k") && !text.contains("exchanges 9.1k"), "{text}");
        let line = |b: Value| summary(&SummaryInput::from_value(json!({"records": [record(json!([b]))]})));
        assert!(line(json!({"rule": "checkpoint", "savedChars": 80000, "requests": 40, "factor": 13, "rewriteChars": 234360,
            "cache": "openai-codex", "basis": "whole", "paidOff": true}))
            .contains("  break-even: checkpoint 80.0k pending × 40 later requests ≥ 13 × 234.4k rewrite (openai-codex, whole context) → paid off"));
        // Riding along: nothing extra to rewrite, no minimum.
        assert!(line(json!({"rule": "exchanges", "savedChars": 7750, "requests": 13, "factor": 16, "rewriteChars": 0,
            "minSavingChars": 8000, "cache": "openai-codex", "basis": "whole", "paidOff": true}))
            .contains("  break-even: exchanges 7.8k saved × 13 later requests ≥ 16 × 0 rewrite (openai-codex, whole context) → paid off\n"));
        assert!(line(json!({"rule": "exchanges", "savedChars": 7750, "requests": 130, "factor": 16, "rewriteChars": 23577,
            "minSavingChars": 8000, "cache": "anthropic", "basis": "question", "paidOff": false}))
            .contains("  break-even: exchanges 7.8k saved × 130 later requests ≥ 16 × 23.6k rewrite (anthropic, after question), under the 8.0k minimum → deferred\n"));
        // The skipped checkpoint's line names the cache when its gate does.
        let skip =
            SummaryInput::from_value(json!({"lastSkip": {"skipped": "not-paying-off", "gate": {"pendingChars": 80000,
            "turns": 8, "factor": 16, "rewriteChars": 80533, "cache": "anthropic", "basis": "question"}}}));
        assert!(summary(&skip).contains(
            "not paying off, 80.0k chars × 8 later requests < 16 × 80.5k chars of cache rewrite (anthropic, after question)\n"
        ));
    }

    #[test]
    fn says_each_decision_in_dollars_when_the_catalog_has_prices() {
        // The example: 31.2k tokens written again (a measure of 44.7k tokens, 13.5k expected to go)
        // cost $0.117; $0.081 expected over about 10 more requests.
        let skip =
            SummaryInput::from_value(json!({"lastSkip": {"skipped": "not-paying-off", "gate": {"pendingChars": 90000,
            "turns": 10, "expectedChars": 54000, "later": 10, "gainMicros": 81000, "costMicros": 117000,
            "rewriteChars": 178800, "cache": "anthropic", "basis": "question"}}}));
        assert!(summary(&skip).contains(
            "  last checkpoint skipped (turn 10): not paying off: writing 31.2k tokens again costs $0.117; expected to save $0.081 over about 10 more requests (anthropic, after question)\n"
        ), "{}", summary(&skip));
        let line = |b: Value| {
            let record = json!({"v": 1, "phase": "mid-run", "model": "m", "savedChars": 0, "requests": 1, "inputTokens": 0.0,
                "costUsd": 0.0, "ms": 5.0, "timedOut": false, "results": [], "breakEven": [b]});
            summary(&SummaryInput::from_value(json!({"records": [record]})))
        };
        // Written again: the measure (160.9k characters) less the 36.1k expected to go.
        let money = json!({"rule": "checkpoint", "savedChars": 60200, "requests": 12, "rewriteChars": 160900, "expectedChars": 36100,
            "later": 30, "gainMicros": 81000, "costMicros": 117000, "cache": "anthropic", "basis": "question", "paidOff": false});
        assert!(line(money).contains(
            "  break-even: checkpoint 60.2k pending, 36.1k expected to go: saves $0.081 over ~30 later requests < $0.117 to write 31.2k tokens again (anthropic, after question) → skipped\n"
        ));
        // On a cold cache: what it saves, and no rewrite.
        let cold = json!({"rule": "exchanges", "savedChars": 10000, "requests": 4, "rewriteChars": 0, "expectedChars": 10000,
            "later": 4, "gainMicros": 3000, "costMicros": 0, "lapsedMs": 600400, "cache": "anthropic", "basis": "question", "paidOff": true});
        assert!(line(cold).contains(
            "  break-even: exchanges 10.0k saved: cache lapsed after 10 min idle, nothing written again for it; saves $0.003 over ~4 later requests (anthropic) → paid off\n"
        ), "{}", line(json!({})));
        let cold = json!({"rule": "images", "savedChars": 6426, "requests": 17, "factor": 16, "rewriteChars": 0,
            "lapsedMs": 3_900_000, "cache": "prefix", "basis": "first-edit", "paidOff": true});
        assert!(line(cold).contains(
            "  break-even: images 6.4k saved: cache lapsed after 1 h 5 min idle, nothing written again for it (prefix) → paid off\n"
        ));
        let room = json!({"rule": "checkpoint", "savedChars": 60200, "requests": 12, "rewriteChars": 124800, "expectedChars": 36100,
            "later": 3, "gainMicros": 100, "costMicros": 117000, "room": true, "cache": "prefix", "basis": "first-edit", "paidOff": true});
        assert!(line(room).contains(
            "  break-even: checkpoint 60.2k pending, 36.1k expected to go: past the room trigger, the money rule not weighed (prefix, from the first edit) → paid off\n"
        ));
    }
}
