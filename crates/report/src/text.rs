//! The plain-text report, for every mode but the TUI (`print`, `json`, `rpc`):
//! the same facts as the screen, in lines no wider than about 80 columns.
//!
//! Token columns are compact (`5.1k`); percentages are computed from unrounded
//! tokens and shown to one decimal, so re-deriving one from the printed
//! figures can differ slightly. Every label was sanitized when its row was built.

use super::drift::DriftNote;
use super::gauge::{GaugeBasis, WINDOW_CELLS};
use super::threshold::{ReserveSource, ThresholdState, WindowSource};
use super::ContextReport;
use context_guard_base::decimal::fixed;
use serde::Serialize;
use std::fmt::Write;

/// A filled cell and an empty one, in the screen and in this text.
pub const FULL: char = '█';
pub const EMPTY: char = '░';
/// A row's one cell when its share is under half a cell.
pub const THIN: char = '▏';

pub use super::count;

fn signed(n: i64) -> String {
    let magnitude = count(n.unsigned_abs());
    if n < 0 {
        format!("-{magnitude}")
    } else {
        format!("+{magnitude}")
    }
}

/// A percentage as printed: one decimal, computed from unrounded tokens.
pub fn percent_text(p: f64) -> String {
    format!("{}%", fixed(p, 1))
}

/// The report's sentences, shared by the screen and the text.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sentences {
    pub headline: String,
    pub threshold: String,
    pub composition: String,
    /// What the rows' bars mean (`gauge::BARS_LEGEND`), under the table.
    pub bars: String,
    pub drift: String,
    pub history: String,
    /// Context per request over the branch, in short.
    pub requests: String,
    /// The last request's cache, when there was a request.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cache: Option<String>,
    /// The session's cost as Pi's footer shows it, when it shows one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cost: Option<String>,
    /// The guard's part by kind, one line per kind with anything kept out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub kept_kinds: Vec<String>,
    /// How often the model recalled what the guard kept out, when it is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub recalled: Option<String>,
    /// What context-guard keeps out of the window, when it is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub guard: Option<String>,
    /// The guard's net effect on the main model's bill so far, when the guard computed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub bill: Option<String>,
}

/// Every sentence of the report.
pub fn sentences(r: &ContextReport) -> Sentences {
    Sentences {
        headline: headline_line(r),
        threshold: threshold_line(r),
        composition: format!("Composition (estimate: {} tokens)", count(r.estimate)),
        bars: super::gauge::BARS_LEGEND.to_string(),
        drift: drift_line(r),
        history: history_line(r),
        requests: super::requests::series_line(&r.requests),
        cache: super::requests::cache_line(&r.requests),
        cost: super::requests::cost_line(&r.requests),
        guard: r.guard.as_ref().map(guard_line),
        bill: r.guard.as_ref().and_then(|g| g.bill.as_ref()).map(|b| {
            // The one money answer first, on its own line (issue 28): `/guard`'s first line's words.
            let answer = if b.answer.is_empty() { String::new() } else { format!("context-guard {}\n", b.answer) };
            format!("{answer}Net effect of context-guard on the main model's bill so far: {}", b.line)
        }),
        kept_kinds: r.kept_detail.as_ref().map(super::kept_detail::kind_lines).unwrap_or_default(),
        recalled: r.kept_detail.as_ref().filter(|d| d.kept_out > 0).map(super::kept_detail::recall_line),
    }
}

/// What the guard keeps out: tokens now (characters ÷ 4, the same estimate
/// as the rows above) and the total of every pass on the branch, which a
/// compaction does not undo.
fn guard_line(g: &context_guard_base::kept::Stats) -> String {
    let tokens = |chars: usize| count(chars.div_ceil(4) as u64);
    let now = if g.items == 0 {
        "nothing right now".to_string()
    } else {
        format!("~{} tokens in {} item{}", tokens(g.saved_chars), g.items, if g.items == 1 { "" } else { "s" })
    };
    if g.lifetime_chars > g.saved_chars {
        let why = if g.compacted { ", some before a compaction" } else { "" };
        format!("Kept out by context-guard: {now}; ~{} on this branch in all{why}", tokens(g.lifetime_chars))
    } else {
        format!("Kept out by context-guard: {now}")
    }
}

/// `filled` full cells then empty ones, `of` in all.
pub fn bar(filled: u8, of: u8) -> String {
    let filled = filled.min(of);
    let mut s = String::with_capacity(usize::from(of) * 3);
    s.extend(std::iter::repeat_n(FULL, usize::from(filled)));
    s.extend(std::iter::repeat_n(EMPTY, usize::from(of - filled)));
    s
}

/// One thin cell then empty ones, `of` in all: a share under half a cell.
fn thin_bar(of: u8) -> String {
    let mut s = String::from(THIN);
    s.extend(std::iter::repeat_n(EMPTY, usize::from(of.saturating_sub(1))));
    s
}

/// The headline sentence (also the screen's first line).
pub fn headline_line(r: &ContextReport) -> String {
    let h = &r.headline;
    match (h.tokens, h.window) {
        (_, None) => "Window unknown: the model has no known context window".to_string(),
        (None, Some(w)) => format!(
            "Total pending / {} tokens: Pi recalculates it after the next reply (composition {})",
            count(w),
            count(r.estimate)
        ),
        (Some(t), Some(w)) => {
            let source = if h.window_source == WindowSource::Model { " (model's window)" } else { "" };
            format!(
                "{} / {} tokens ({}%){source}, {} free",
                count(t),
                count(w),
                fixed(h.percent.unwrap_or(0.0), 1),
                count(h.free.unwrap_or(0))
            )
        }
    }
}

/// The threshold sentence.
pub fn threshold_line(r: &ContextReport) -> String {
    let t = &r.threshold;
    match t.state {
        ThresholdState::Off => "Auto-compaction is off (compaction.enabled is false): no threshold".to_string(),
        ThresholdState::UnknownWindow => "No threshold without a known window: compaction is left to Pi".to_string(),
        ThresholdState::Invalid => format!("No threshold: {}", t.problem.as_deref().unwrap_or("invalid settings")),
        ThresholdState::On => {
            let source = match t.reserve_source {
                Some(ReserveSource::ModelOverride) => {
                    format!("modelOverrides[\"{}\"]", t.model_key.as_deref().unwrap_or(""))
                }
                Some(ReserveSource::Settings) => "compaction.reserveTokens".to_string(),
                _ => "Pi's default".to_string(),
            };
            let head = format!(
                "Auto-compaction at {} (reserve {} from {source})",
                count(t.at.unwrap_or(0)),
                count(t.reserve.unwrap_or(0))
            );
            match t.headroom {
                Some(h) if h >= 0 => format!("{head}, {} headroom", count(h.unsigned_abs())),
                Some(h) => format!("{head}, past it by {}", count(h.unsigned_abs())),
                None => format!("{head}, headroom pending"),
            }
        }
    }
}

/// The drift sentence.
pub fn drift_line(r: &ContextReport) -> String {
    let d = &r.drift;
    let (Some(host), Some(diff)) = (d.host, d.difference) else {
        return format!("Drift: unknown while Pi's total is unknown (the rows' sum {})", count(d.estimate));
    };
    let figures = format!("Pi {} vs the rows' sum {}", count(host), count(d.estimate));
    match d.note {
        DriftNote::Unattributed => format!("Drift: {figures}, {} unattributed", signed(diff)),
        DriftNote::HostCountsMessagesOnly => format!("Drift: {figures}, {}: host counts messages only", signed(diff)),
        DriftNote::EstimateAbove => format!("Drift: {figures}, {}: the estimate is above Pi's total", signed(diff)),
        DriftNote::None | DriftNote::Unknown => format!("Drift: {figures}, no difference"),
    }
}

/// The compaction-history sentence.
pub fn history_line(r: &ContextReport) -> String {
    let h = &r.history;
    match &h.latest {
        None => "Compactions: none on this branch".to_string(),
        Some(cut) => format!(
            "Compactions: {} on this branch; the newest cut {} to ~{}, its summary costs {}",
            h.count,
            count(cut.tokens_before),
            count(cut.tokens_after),
            count(cut.summary_tokens)
        ),
    }
}

/// A row's label with its message count.
pub fn row_label(label: &str, id: &str, n: u32) -> String {
    if id == "system" || n == 0 {
        label.to_string()
    } else {
        format!("{label} ({n})")
    }
}

/// A row's figures: tokens, percentage, filled cells, its one cell thin.
type Figures = (u64, f64, u8, bool);

fn table_line(
    out: &mut String,
    (indent, label): (usize, &str),
    width: usize,
    (tokens, pct, cells, thin): Figures,
    tail: &str,
) {
    let pad = width.saturating_sub(label.chars().count() + indent);
    let _ = writeln!(
        out,
        "  {}{label}{} {:>7} {:>7}  {}{tail}",
        " ".repeat(indent),
        " ".repeat(pad),
        count(tokens),
        percent_text(pct),
        if thin { thin_bar(super::gauge::ROW_CELLS) } else { bar(cells, super::gauge::ROW_CELLS) }
    );
}

/// The whole plain-text report.
pub fn render(r: &ContextReport) -> String {
    let mut out = String::new();
    let s = &r.sentences;
    let _ = writeln!(out, "Context: {}", s.headline);
    let g = &r.window_gauge;
    if g.basis != GaugeBasis::None {
        let what = if g.basis == GaugeBasis::Estimate { "  (estimate)" } else { "" };
        let _ = writeln!(out, "  [{}]{what}", bar(g.filled, WINDOW_CELLS));
        let _ = writeln!(out, "  {FULL} in the window (a tenth of it each) · {EMPTY} free");
    }
    let _ = writeln!(out, "{}", s.threshold);
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", s.composition);
    let labels: Vec<&str> = r.rows.iter().map(|row| row.caption.as_str()).collect();
    let width =
        r.rows.iter().zip(&labels).map(|(row, l)| l.chars().count() + 2 * usize::from(row.depth)).max().unwrap_or(0);
    for (row, label) in r.rows.iter().zip(&labels) {
        table_line(
            &mut out,
            (2 * usize::from(row.depth), label),
            width,
            (row.tokens, row.percent, row.cells, row.thin),
            "",
        );
    }
    if !r.rows.is_empty() {
        let _ = writeln!(out, "{}", s.bars);
    }
    let _ = writeln!(out, "{}", s.drift);
    if let Some(guard) = &s.guard {
        let _ = writeln!(out, "{guard}");
    }
    if !s.kept_kinds.is_empty() {
        let _ = writeln!(out, "  By kind, every pass on this branch:");
        for line in &s.kept_kinds {
            let _ = writeln!(out, "    {line}");
        }
    }
    for line in [&s.recalled, &s.bill].into_iter().flatten() {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", s.history);
    let _ = writeln!(out, "{}", s.requests);
    for line in [&s.cache, &s.cost].into_iter().flatten() {
        let _ = writeln!(out, "{line}");
    }
    if !r.largest.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "Largest messages");
        let width = r.largest.iter().map(|l| l.role.chars().count()).max().unwrap_or(0);
        for l in &r.largest {
            let tail = if l.descriptor.is_empty() { String::new() } else { format!("  {}", l.descriptor) };
            table_line(&mut out, (0, &l.role), width, (l.tokens, l.percent, l.cells, l.thin), &tail);
        }
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::super::{
        CompactionInputs, ContextInputs, ContextReport, HistoryInputs, HostUsage, LatestCompaction, MessageText,
        Messages, ModelRef,
    };
    use super::*;

    /// The report, with the texts the tests give their messages: the assistant
    /// and the tool result name the tool `bash`.
    fn build(inputs: &ContextInputs) -> ContextReport {
        super::super::build(inputs, &mut |i| {
            let tool = matches!(inputs.messages.kind_of(i).role.as_str(), "assistant" | "toolResult");
            MessageText { tool_name: tool.then(|| "bash".into()), ..Default::default() }
        })
    }

    fn users(tokens: f64) -> Messages {
        let mut messages = Messages::default();
        messages.push("user", None, tokens);
        messages
    }

    fn inputs(tokens: Option<f64>) -> ContextInputs {
        ContextInputs {
            usage: Some(HostUsage { tokens, context_window: Some(200_000.0), percent: None }),
            model: Some(ModelRef { provider: "faux".into(), id: "faux-1".into(), context_window: Some(200_000.0) }),
            system: super::super::SystemInputs { content: "p".repeat(4000), ..Default::default() },
            messages: {
                let mut messages = users(10.0);
                messages.push("assistant", None, 20.0);
                messages.push("toolResult", None, 3000.0);
                messages.push("custom", Some("\x1b[31mnotes\x07"), 40.0);
                messages
            },
            compaction: CompactionInputs::default(),
            ..Default::default()
        }
    }

    #[test]
    fn the_report_reads_top_to_bottom() {
        let text = build(&inputs(Some(5000.0))).text;
        let expected_start = "Context: 5.0k / 200.0k tokens (2.5%), 195.0k free\n  [█░░░░░░░░░]\n\
            \x20 █ in the window (a tenth of it each) · ░ free\n\
            Auto-compaction at 183.6k (reserve 16.4k from Pi's default), 178.6k headroom\n\n\
            Composition (estimate: 4.1k tokens)\n";
        assert!(text.starts_with(expected_start), "{text}");
        assert!(text.contains("  System prompt           1.0k   24.6%  ██░░░░░░"), "{text}");
        assert!(text.contains("  Tool results (1)        3.0k   73.7%  ██████░░"), "{text}");
        assert!(text.contains("  Injected context (1)      40    1.0%  ▏░░░░░░░"), "{text}");
        assert!(text.contains("    [31mnotes (1)"), "{text}");
        assert!(text.contains("Drift: Pi 5.0k vs the rows' sum 4.1k, +930 unattributed"), "{text}");
        assert!(text.contains("Compactions: none on this branch"), "{text}");
        assert!(text.contains("  toolResult    3.0k   73.7%  ██████░░  bash"), "{text}");
        assert!(text.contains("  assistant       20    0.5%  ▏░░░░░░░  calls bash"), "{text}");
        // 24.6% is two cells (an eighth is 12.5%), 1.0% is under half a cell: thin.
        assert!(
            text.contains("\nBars here and below: █ an eighth of the context each, ▏ under a sixteenth\nDrift:"),
            "{text}"
        );
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
        assert!(text.lines().all(|l| l.chars().count() <= 90), "{text}");
    }

    #[test]
    fn a_pending_total_says_so_instead_of_inventing_one() {
        let mut i = inputs(None);
        i.history = HistoryInputs {
            count: 1,
            latest: Some(LatestCompaction { tokens_before: 61_000.0, summary: "s".repeat(800) }),
            kept: vec![2],
        };
        let text = build(&i).text;
        assert!(text.contains("Total pending / 200.0k tokens: Pi recalculates it after the next reply"), "{text}");
        assert!(text.contains("(estimate)"), "{text}");
        assert!(text.contains("headroom pending"), "{text}");
        assert!(text.contains("Drift: unknown"), "{text}");
        assert!(
            text.contains("Compactions: 1 on this branch; the newest cut 61.0k to ~4.2k, its summary costs 200"),
            "{text}"
        );
    }

    #[test]
    fn host_counts_messages_only_before_the_first_reply() {
        let mut i = inputs(Some(10.0));
        i.messages = users(10.0);
        let text = build(&i).text;
        assert!(text.contains("Drift: Pi 10 vs the rows' sum 1.0k, -1.0k: host counts messages only"), "{text}");
    }

    #[test]
    fn off_unknown_and_invalid_thresholds_read_plainly() {
        let mut off = inputs(Some(10.0));
        off.compaction.settings = Some(serde_json::json!({ "enabled": false }));
        assert!(build(&off).text.contains("Auto-compaction is off"));
        let mut invalid = inputs(Some(10.0));
        invalid.compaction.settings = Some(serde_json::json!({ "reserveTokens": -1 }));
        assert!(build(&invalid).text.contains("No threshold: compaction.reserveTokens is -1"));
        let unknown = ContextInputs { messages: users(3.0), ..Default::default() };
        let text = build(&unknown).text;
        assert!(text.starts_with("Context: Window unknown"), "{text}");
        assert!(text.contains("No threshold without a known window"), "{text}");
    }

    #[test]
    fn requests_cache_and_cost_follow_the_history() {
        let mut i = inputs(Some(5000.0));
        let text = build(&i).text;
        assert!(
            text.contains("Compactions: none on this branch\nContext per request: no request on this branch yet\n"),
            "{text}"
        );
        i.requests = super::super::requests::RequestInputs {
            tokens: vec![1200.0, 5000.0],
            marks: vec![0, 2],
            last: Some([100.0, 4000.0, 900.0]),
            cost: Some(0.0416),
        };
        let text = build(&i).text;
        let expected = "Compactions: none on this branch\n\
            Context per request: 2 on this branch, first 1.2k, peak 5.0k (request 2), last 5.0k\n\
            Last request's cache: 4.0k read, 900 written, 100 uncached\n\
            Session cost: $0.042 (all branches, as Pi's footer sums it)\n";
        assert!(text.contains(expected), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 90), "{text}");
    }

    #[test]
    fn bars_are_exactly_their_width() {
        assert_eq!(bar(3, 8), "███░░░░░");
        assert_eq!(bar(12, 8), "████████");
        assert_eq!(bar(0, 10).chars().count(), 10);
    }

    #[test]
    fn the_guard_line_names_what_is_kept_out_now_and_in_all() {
        use context_guard_base::kept::Stats;
        let line = |g: Stats| guard_line(&g);
        assert_eq!(line(Stats::default()), "Kept out by context-guard: nothing right now");
        assert_eq!(
            line(Stats { saved_chars: 56_800, items: 2, lifetime_chars: 56_800, ..Stats::default() }),
            "Kept out by context-guard: ~14.2k tokens in 2 items"
        );
        assert_eq!(
            line(Stats { saved_chars: 0, items: 0, lifetime_chars: 316_000, compacted: true, ..Stats::default() }),
            "Kept out by context-guard: nothing right now; ~79.0k on this branch in all, some before a compaction"
        );
    }

    #[test]
    fn the_bill_line_is_the_guards_own_under_the_guard_part() {
        use context_guard_base::kept::{Bill, Stats};
        let bill = Bill { line: "saved ~$0.0100 (est. …)".into(), ..Bill::default() };
        // Read back as the extension hands the guard's figures over.
        let stats = Stats::from_value(serde_json::json!({ "items": 1, "bill": serde_json::to_value(&bill).unwrap() }));
        let mut i = inputs(Some(5000.0));
        i.guard = Some(stats);
        let r = build(&i);
        let said = "Net effect of context-guard on the main model's bill so far: saved ~$0.0100 (est. …)";
        assert_eq!(r.sentences.bill.as_deref(), Some(said));
        assert!(r.text.contains(&format!("\n{said}\n")), "{}", r.text);
        // With prices, the one money answer on the line above (issue 28).
        let priced = Bill { answer: "saved $0.27 on this session's bill so far (est.)".into(), ..bill };
        i.guard =
            Some(Stats::from_value(serde_json::json!({ "items": 1, "bill": serde_json::to_value(&priced).unwrap() })));
        let text = build(&i).text;
        assert!(
            text.contains(&format!("\ncontext-guard saved $0.27 on this session's bill so far (est.)\n{said}\n")),
            "{text}"
        );
        // Without a bill (the status bar's figures, or a bill without its line): no line.
        i.guard = Some(Stats::from_value(serde_json::json!({ "items": 1, "bill": { "edits": 2 } })));
        assert_eq!(build(&i).sentences.bill, None);
    }
}
