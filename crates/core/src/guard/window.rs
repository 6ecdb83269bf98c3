//! The segment size the classifier's window allows (issue 9 part 4).
//!
//! For: clipping `maxSegmentChars` so that every request the guard sends, in
//! its worst case, fits the classifier model's `contextWindow` (Pi's model
//! object; the extension passes the number). Not for: reading the model or
//! warning the user (the extension does both, the warning's text is here).
//!
//! A request is its segment (at most `maxSegmentChars` of chunk or item text)
//! plus fixed parts: the question (≤ 4,000), the answer (≤ 6,000) and notes
//! (≤ 2,000) or at a checkpoint the agent's progress, the history, the tool's
//! name and arguments (≤ 600), the situation text, the later calls, and one
//! question per chunk or item (up to `maxChunksPerSegment`). [`fixed_chars`]
//! measures them: it builds each kind of request (a large output's segment,
//! small outputs, old exchanges; at run end and at a checkpoint) with every
//! part at its limit and no segment text, writes it as the extension receives
//! it (`json::requests`) and takes the largest JavaScript length. So a new
//! field or a longer question is counted without a second list of sizes.

use serde::Serialize;

use crate::guard::classify::{ClassifierContext, ExchangeItem, SmallItem, ANSWER_MAX, NOTES_MAX, QUESTION_MAX};
use crate::guard::decide::{large_request, RequestInput};
use crate::guard::exchange::request as exchange_request;
use crate::guard::items::{output_key, small_request, superseded_by};
use crate::guard::render::tool_label;
use crate::guard::settings::Settings;
use crate::guard::span::{
    Exchange, History, Run, EXCHANGE_PROMPT_MAX, EXCHANGE_REPLY_MAX, FIRST_REQUEST_MAX, SUMMARY_MAX,
};
use crate::text::{js_len, short_count};

/// Characters a classifier token is assumed to hold: 2.5 (as tenths, 25).
///
/// Measured with OpenAI's o200k_base and cl100k_base tokenizers (npm
/// `gpt-tokenizer` 3) on tool outputs written as JSON strings, the way a
/// request carries them: `rg -n` 3.27 / 3.41 characters a token, `rg -C 2`
/// 3.18 / 3.31, `git log --stat` 3.21 / 3.23, JavaScript source 4.26 / 4.31,
/// prose (docs/GUARD.md) 3.82 / 3.83, `Cargo.lock` 2.58 / 2.59, `ls -laR`
/// 2.42 / 2.41. The classifier's own tokenizer is not published, so the ratio
/// is below every shape but the densest listing, whose request still fits
/// because its fixed parts are prose. Pi's 4 (`estimateTokens`) would
/// overflow on logs and search results.
pub const CHARS_PER_TOKEN_TENTHS: u64 = 25;

/// The least `maxSegmentChars` the settings allow (a chunk is at least 800).
pub const MIN_SEGMENT_CHARS: usize = 1000;

/// Tool names are at most 64 characters (Anthropic's and OpenAI's limit for
/// function names).
const TOOL_NAME_MAX: usize = 64;

/// A chunk or item number of seven digits: an output would need millions of
/// chunks to go past it, and a longer key adds a few characters.
const KEY_NUMBER: usize = 1_000_000;

/// `maxSegmentChars` as the classifier's window allows, and the warning when
/// that is less than the setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fit {
    pub max_segment_chars: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The largest fixed part of any request under these settings, in
/// JavaScript characters of the request's JSON (see the module's comment).
pub fn fixed_chars(s: &Settings) -> usize {
    let n = s.max_chunks_per_segment;
    let mut largest = 0;
    for mid_run in [false, true] {
        let run = worst_run(s, mid_run);
        for request in [worst_large(&run, n), worst_small(&run, n), worst_exchanges(&run, n)] {
            let json = crate::guard::json::requests(std::slice::from_ref(&request), &[]);
            // The JSON array's two brackets are not part of the request.
            largest = largest.max(js_len(&json).saturating_sub(2));
        }
    }
    largest
}

/// `maxSegmentChars` clipped to what a window of `context_window` tokens
/// takes beside [`fixed_chars`], rounded down to a thousand and at least
/// [`MIN_SEGMENT_CHARS`]. An unknown window (`None`, not a finite number ≥ 1)
/// leaves the setting as it is.
pub fn fit_segment(s: &Settings, context_window: Option<f64>) -> Fit {
    let keep = Fit { max_segment_chars: s.max_segment_chars, warning: None };
    let Some(window) = context_window.filter(|w| w.is_finite() && *w >= 1.0) else { return keep };
    // Whole tokens; a window past u64 is taken as u64's largest.
    let tokens = window.floor().min(u64::MAX as f64) as u64;
    let room = usize::try_from(tokens.saturating_mul(CHARS_PER_TOKEN_TENTHS) / 10).unwrap_or(usize::MAX);
    let fits = room.saturating_sub(fixed_chars(s)) / 1000 * 1000;
    let chars = fits.max(MIN_SEGMENT_CHARS);
    if s.max_segment_chars <= chars {
        return keep;
    }
    let mut warning = format!(
        "maxSegmentChars {} is more than the classifier {} ({} tokens) can take; using {}",
        s.max_segment_chars,
        s.model,
        thousands(tokens),
        thousands(chars as u64)
    );
    if fits < MIN_SEGMENT_CHARS {
        // Even an empty segment may not fit: fewer chunks or less history would.
        warning.push_str(
            ", and its longest requests may still not fit (a lower maxChunksPerSegment or historyExchanges would help)",
        );
    }
    Fit { max_segment_chars: chars, warning: Some(warning) }
}

/// [`fit_segment`] over the boundary: the settings as `Settings` serializes
/// them (read through the same validation), the JSON of [`Fit`] back.
pub fn fit_json(settings_json: &str, context_window: Option<f64>) -> String {
    let settings: Settings = serde_json::from_str(settings_json).unwrap_or_default();
    serde_json::to_string(&fit_segment(&settings, context_window)).unwrap_or_default()
}

/// `8192` as `8,192`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A run whose every part the requests carry is at its limit (longer texts
/// are clipped by the builders to exactly their limits).
fn worst_run(s: &Settings, mid_run: bool) -> Run {
    let long = |c: &str, n: usize| c.repeat(n + 1);
    let history = if s.history_exchanges == 0 {
        History::default()
    } else {
        History {
            summary: Some("s".repeat(SUMMARY_MAX)),
            first_request: Some("f".repeat(FIRST_REQUEST_MAX)),
            exchanges: (0..s.history_exchanges)
                .map(|_| Exchange { user: "u".repeat(EXCHANGE_PROMPT_MAX), assistant: "r".repeat(EXCHANGE_REPLY_MAX) })
                .collect(),
        }
    };
    Run {
        question: long("q", QUESTION_MAX),
        answer: long("a", ANSWER_MAX),
        notes: long("n", ANSWER_MAX + NOTES_MAX),
        history,
        mid_run,
        ..Run::default()
    }
}

/// The longest label a tool call gets (`render::tool_label`).
fn worst_label() -> String {
    tool_label(&"t".repeat(TOOL_NAME_MAX), &serde_json::json!({ "command": "c".repeat(1000) }))
}

/// The longest reason a later call gives for superseding an output.
fn worst_superseded() -> String {
    let read = serde_json::json!({ "path": "p" });
    let bash = serde_json::json!({ "command": "c" });
    [("read", &read, "edit"), ("read", &read, "read"), ("bash", &bash, "bash"), ("other", &read, "other")]
        .into_iter()
        .filter_map(|(tool, args, later)| superseded_by(tool, args, std::iter::once((later, args))))
        .max_by_key(|r| js_len(r))
        .unwrap_or_default()
}

fn worst_large(run: &Run, chunks: usize) -> ClassifierContext {
    let arguments = serde_json::json!({ "command": "c".repeat(2000) });
    // More later calls than are sent, so the gap line is there too.
    let later: Vec<String> = (0..100).map(|_| worst_label()).collect();
    let superseded = worst_superseded();
    let texts: Vec<&str> = vec![""; chunks];
    large_request(&RequestInput {
        run,
        tool: &"t".repeat(TOOL_NAME_MAX),
        arguments: &arguments,
        is_error: true,
        lines: KEY_NUMBER * 1000,
        part: KEY_NUMBER,
        parts: KEY_NUMBER,
        first_number: KEY_NUMBER,
        chunk_texts: &texts,
        later_calls: &later,
        superseded: Some(&superseded),
    })
}

fn worst_small(run: &Run, items: usize) -> ClassifierContext {
    // The label and the output count towards `maxSegmentChars`; the rest is fixed.
    let item = SmallItem {
        tool: String::new(),
        status: Some("failed".to_string()),
        superseded: Some(worst_superseded()),
        output: String::new(),
    };
    small_request(run, (0..items).map(|i| (output_key(KEY_NUMBER + i), item.clone())).collect())
}

fn worst_exchanges(run: &Run, items: usize) -> ClassifierContext {
    // The prompt, the reply and the labels count towards `maxSegmentChars`; the size line is fixed.
    let item = ExchangeItem {
        user: String::new(),
        assistant: String::new(),
        tool_calls: Vec::new(),
        size: format!("{} messages, {} chars", KEY_NUMBER, short_count(usize::MAX)),
    };
    let key = |i: usize| crate::guard::exchange::exchange_key(KEY_NUMBER + i);
    exchange_request(run, (0..items).map(|i| (key(i), item.clone())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::decide::chunk_key;
    use crate::guard::exchange::exchange_key;

    fn settings(max_segment_chars: usize) -> Settings {
        Settings { max_segment_chars, model: "fakejev/small".into(), ..Settings::default() }
    }

    #[test]
    fn the_fixed_parts_are_measured_from_the_requests() {
        let d = Settings::default();
        // The largest is a large output's segment at run end with the default history
        // (3 exchanges) and 40 chunks: its question, answer and notes (12,000), the
        // history (2,000 + 1,000 + 3 × 2,000), the arguments (600), the tool, the
        // situation, and 40 chunk questions, as JSON. If a request's text changes,
        // this number does: check the window rule still holds, then update it.
        assert_eq!(fixed_chars(&d), 41_423);
        // One more earlier exchange: its prompt and reply (800 + 1,200) and its JSON
        // `,{"user":"","assistant":""}` (27).
        let h = |n: usize| fixed_chars(&Settings { history_exchanges: n, ..d.clone() });
        assert_eq!(h(4) - h(3), 2_027);
        assert!(h(0) < h(3) - 9_000, "no history: no summary, first request or exchanges");
        // More chunks a segment: more questions, so more room goes to them.
        let c = |n: usize| fixed_chars(&Settings { max_chunks_per_segment: n, ..d.clone() });
        assert!(c(1) < c(40) && c(40) < c(41) && c(41) < c(1000));
    }

    #[test]
    fn real_requests_stay_within_the_fixed_parts_plus_their_segment() {
        for s in [
            Settings::default(),
            Settings { history_exchanges: 0, max_chunks_per_segment: 5, ..Settings::default() },
            Settings { history_exchanges: 10, ..Settings::default() },
        ] {
            let fixed = fixed_chars(&s);
            for mid_run in [false, true] {
                let mut run = worst_run(&s, mid_run);
                run.question = "where is the status handled? ".repeat(200);
                let n = s.max_chunks_per_segment;
                // Chunks of uneven sizes that together fill the segment.
                let texts: Vec<String> =
                    (0..n).map(|i| "src/status.ts:12: let status = 1;\n".repeat(1 + i % 7)).collect();
                let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                let segment: usize = texts.iter().map(|t| js_len(t)).sum();
                let later = vec!["bash `rg -n status`".to_string(); 40];
                let arguments = serde_json::json!({ "command": "rg -n status src" });
                let large = large_request(&RequestInput {
                    run: &run,
                    tool: "bash",
                    arguments: &arguments,
                    is_error: true,
                    lines: 41_000,
                    part: 3,
                    parts: 12,
                    first_number: 81,
                    chunk_texts: &texts,
                    later_calls: &later,
                    superseded: Some("the same command was run again later in the run"),
                });
                let small = small_request(
                    &run,
                    texts
                        .iter()
                        .enumerate()
                        .map(|(i, t)| {
                            let item = SmallItem {
                                tool: String::new(),
                                status: Some("failed".into()),
                                superseded: Some(worst_superseded()),
                                output: t.to_string(),
                            };
                            (output_key(i + 1), item)
                        })
                        .collect(),
                );
                let exchanges = exchange_request(
                    &run,
                    texts
                        .iter()
                        .enumerate()
                        .map(|(i, t)| {
                            let item = ExchangeItem {
                                user: t.to_string(),
                                assistant: String::new(),
                                tool_calls: vec![],
                                size: "12 messages, 36.1k chars".into(),
                            };
                            (exchange_key(i + 1), item)
                        })
                        .collect(),
                );
                for r in [large, small, exchanges] {
                    let json = crate::guard::json::requests(std::slice::from_ref(&r), &[]);
                    // Each chunk text has 1–7 lines whose `\n` JSON writes as two characters.
                    let escapes: usize = texts.iter().map(|t| t.matches('\n').count()).sum();
                    assert!(js_len(&json) - 2 <= fixed + segment + escapes, "{} > {fixed} + {segment}", js_len(&json));
                }
            }
        }
        assert_eq!(chunk_key(KEY_NUMBER), "chunk_1000000");
    }

    #[test]
    fn a_larger_setting_is_clipped_to_the_window_worked_numbers() {
        // 25,130 tokens at 2.5 characters: 62,825 characters; less the fixed parts
        // (41,423): 21,402, rounded down to 21,000.
        let fit = fit_segment(&settings(40_000), Some(25_130.0));
        assert_eq!(fit.max_segment_chars, 21_000);
        assert_eq!(
            fit.warning.as_deref(),
            Some("maxSegmentChars 40000 is more than the classifier fakejev/small (25,130 tokens) can take; using 21,000")
        );
        // Jev's 32,000 tokens: 80,000 − 41,423 = 38,577, so the default 32,000 stays.
        assert_eq!(fit_segment(&settings(32_000), Some(32_000.0)), Fit { max_segment_chars: 32_000, warning: None });
        // A setting below what fits stays, whatever the window.
        assert_eq!(fit_segment(&settings(20_000), Some(25_130.0)).max_segment_chars, 20_000);
        // Fewer chunks a segment and no history leave more room in the same window.
        let lean = Settings { max_chunks_per_segment: 10, history_exchanges: 0, ..settings(60_000) };
        let room = 62_825 - fixed_chars(&lean);
        assert!(room > 40_000, "{room}");
        assert_eq!(fit_segment(&lean, Some(25_130.0)).max_segment_chars, room / 1000 * 1000);
    }

    #[test]
    fn a_window_too_small_for_the_fixed_parts_gives_the_least_segment() {
        // 8,192 tokens: 20,480 characters, less than the fixed parts alone.
        let fit = fit_segment(&settings(32_000), Some(8_192.0));
        assert_eq!(fit.max_segment_chars, MIN_SEGMENT_CHARS);
        let warning = fit.warning.unwrap();
        assert!(warning.starts_with("maxSegmentChars 32000 is more than the classifier fakejev/small (8,192 tokens)"));
        assert!(warning.contains("using 1,000, and its longest requests may still not fit"), "{warning}");
        // Already the least: nothing to clip, no warning.
        assert_eq!(fit_segment(&settings(1_000), Some(8_192.0)), Fit { max_segment_chars: 1_000, warning: None });
    }

    #[test]
    fn an_unknown_window_changes_nothing() {
        for window in [None, Some(0.0), Some(-5.0), Some(0.5), Some(f64::NAN), Some(f64::INFINITY)] {
            assert_eq!(fit_segment(&settings(40_000), window), Fit { max_segment_chars: 40_000, warning: None });
        }
        assert_eq!(fit_segment(&settings(1_000_000), Some(1e300)).max_segment_chars, 1_000_000);
        // A fractional window counts its whole tokens: 25,130.9 is 25,130.
        assert_eq!(fit_segment(&settings(40_000), Some(25_130.9)).max_segment_chars, 21_000);
    }

    #[test]
    fn the_boundary_reads_settings_and_writes_the_fit() {
        let json = r#"{"maxSegmentChars": 40000, "model": "fakejev/small", "modelProvider": "fakejev"}"#;
        assert_eq!(
            fit_json(json, Some(25_130.0)),
            r#"{"maxSegmentChars":21000,"warning":"maxSegmentChars 40000 is more than the classifier fakejev/small (25,130 tokens) can take; using 21,000"}"#
        );
        assert_eq!(fit_json(json, None), r#"{"maxSegmentChars":40000}"#);
        // Not settings: the defaults.
        assert_eq!(fit_json("[]", None), r#"{"maxSegmentChars":32000}"#);
    }

    #[test]
    fn thousands_are_grouped() {
        let cases = [(0, "0"), (999, "999"), (1_000, "1,000"), (8_192, "8,192"), (1_234_567, "1,234,567")];
        for (n, text) in cases {
            assert_eq!(thousands(n), text);
        }
    }
}
