//! The text `/guard` shows: whether the guard is on and can run, its model,
//! what it keeps out of the window, its classifier usage, and the last pass's
//! result for each kind of item with the classifier's traces.
//!
//! For: wording and layout of that report, from figures computed elsewhere
//! (`stats`) and the records on the branch. Not for: computing savings or
//! reading settings.

use serde_json::Value;

use crate::guard::outcome::{Phase, Record, ResultKind};
use crate::guard::stats::status_text;
use crate::kept::Stats;
use crate::text::{sanitize_line, short_count};

/// What the report reads.
#[derive(Debug, Clone, Default)]
pub struct SummaryInput {
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
}

impl SummaryInput {
    /// Read by hand like the guard's other inputs (`read`): a missing or
    /// wrong-typed field reads as empty.
    pub fn from_value(v: Value) -> SummaryInput {
        let mut f = crate::read::Fields::of(v);
        SummaryInput {
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
    lines.push(format!("context-guard: {state}"));
    lines.push(format!("  model: {}", sanitize_line(&input.model, 100)));
    lines.push(format!("  settings: {}", sanitize_line(&input.settings_path, 200)));
    for w in &input.warnings {
        lines.push(format!("  warning: {}", sanitize_line(w, 200)));
    }
    let status = status_text(s);
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
    lines.push(format!(
        "  classifier: {} run-end pass{}, {} mid-run checkpoint{}, {} request{}, {} input tokens, ${:.4}",
        s.runs,
        if s.runs == 1 { "" } else { "es" },
        s.checkpoints,
        if s.checkpoints == 1 { "" } else { "s" },
        s.requests,
        if s.requests == 1 { "" } else { "s" },
        short_count(s.input_tokens.max(0.0) as usize),
        s.cost_usd.max(0.0)
    ));
    lines.push(format!(
        "  old exchanges: {}; mid-run checkpoints: {}",
        if input.prune_exchanges { "pruned when unrelated" } else { "kept" },
        // The setting is read (seed 001's files stay valid) but checkpoints are
        // not built yet: say so rather than "on".
        if input.mid_run { "not in this version (midRun has no effect yet)" } else { "off" }
    ));
    let records: Vec<Record> = input.records.iter().filter_map(Record::from_value).collect();
    for kind in [ResultKind::Large, ResultKind::Small, ResultKind::Exchange, ResultKind::Image] {
        let Some(record) = records.iter().rev().find(|r| r.results.iter().any(|x| x.kind == kind)) else {
            continue;
        };
        lines.push(format!(
            "  last {} ({}, {} ms{}):",
            kind_name(kind),
            match record.phase {
                Phase::RunEnd => "run end",
                Phase::MidRun => "mid-run checkpoint",
            },
            record.ms.max(0.0).round(),
            if record.timed_out { ", timed out" } else { "" }
        ));
        for r in record.results.iter().filter(|x| x.kind == kind) {
            lines.push(format!(
                "    {} {}: {} → {} chars ({}) {}",
                r.outcome.as_str(),
                sanitize_line(&r.label, 60),
                short_count(r.before_chars),
                short_count(r.after_chars),
                sanitize_line(&r.reason, 60),
                sanitize_line(&r.jev, 80)
            ));
        }
    }
    if let Some(line) = &input.before_compaction {
        // Kept by the extension for the session: when the edits could not keep
        // Pi under its threshold nothing is appended, so no record says why.
        lines.push(format!("  {}", sanitize_line(line, 240)));
    }
    lines.push(format!("  core {} (wasm loaded in {:.1} ms)", input.core_version, input.core_load_ms.max(0.0)));
    lines.join("\n")
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
    let input: SummaryInput = serde_json::from_str(input).map_err(|e| format!("guard summary input: {e}"))?;
    Ok(summary(&input))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shows_state_usage_and_the_last_pass_per_kind() {
        let record = json!({"v":1,"phase":"run-end","model":"fakejev/jev-test","savedChars":30000,"requests":2,
            "inputTokens":9000.0,"costUsd":0.0004,"ms":412.0,"timedOut":false,"results":[
            {"kind":"large","entryId":"a1","tool":"bash","label":"bash `rg -n status`","outcome":"distilled",
             "reason":"chunks","beforeChars":36100,"afterChars":6100,"jev":"kw.05 focus=chunk_2:.70 keep 3/12"}]});
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
        assert!(text.contains("[🛡 −7.5k · 1]"), "{text}");
        assert!(text.contains("last large outputs (run end, 412 ms):"), "{text}");
        assert!(
            text.contains(
                "distilled bash `rg -n status`: 36.1k → 6.1k chars (chunks) kw.05 focus=chunk_2:.70 keep 3/12"
            ),
            "{text}"
        );
        assert!(!text.contains("small outputs ("), "{text}");
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
}
