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
//! question per chunk or item (up to `maxChunksPerSegment`).
//!
//! The fixed parts are measured by this module's tests: they build each kind
//! of request (a large output's segment, small outputs, old exchanges; at run
//! end and at a checkpoint) with every part at its limit and no segment text,
//! write it as the extension receives it (`wire::requests`), and derive the
//! four figures [`fixed_chars`] adds up, failing with the new figures when a
//! request's text changes. They are figures here, not the measurement itself,
//! because building requests inside this function put a second copy of the
//! request builders in the `.wasm` (10 KB of the 512 KB budget).

use serde::Serialize;

use crate::settings::Settings;

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

/// The largest request with no history and no chunk or item: a checkpoint's
/// large output (situation, question 4,000, the agent's progress 4,000, the
/// tool's name and arguments, 100 later calls cut to 30 and a gap line, the
/// superseded reason, the two whole-output questions), as JSON.
const BASE_CHARS: usize = 13_816;
/// What a history adds besides its exchanges: the summary (2,000), the first
/// request (1,000), the longer situation and their JSON.
const HISTORY_CHARS: usize = 3_207;
/// One earlier exchange: prompt 800, reply 1,200, `,{"user":"","assistant":""}`.
const EXCHANGE_CHARS: usize = 2_027;
/// The most one chunk or item adds besides its text: a small output's key,
/// status, superseded reason and question (a large output's chunk adds 458).
const ITEM_CHARS: usize = 488;

/// `maxSegmentChars` as the classifier's window allows, and the warning when
/// that is less than the setting.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "SegmentFit"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fit {
    pub max_segment_chars: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub warning: Option<String>,
}

/// The largest fixed part of any request under these settings, in
/// JavaScript characters of the request's JSON: an upper bound the tests
/// check against every kind of request (see the module's comment).
pub fn fixed_chars(s: &Settings) -> usize {
    let history = match s.history_exchanges {
        0 => 0,
        n => HISTORY_CHARS.saturating_add(n.saturating_mul(EXCHANGE_CHARS)),
    };
    BASE_CHARS.saturating_add(history).saturating_add(s.max_chunks_per_segment.saturating_mul(ITEM_CHARS))
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
    let settings = crate::read::from_json(settings_json, Settings::from_value).unwrap_or_default();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{ClassifierContext, ExchangeItem, SmallItem, ANSWER_MAX, NOTES_MAX, QUESTION_MAX};
    use crate::decide::{chunk_key, large_request, RequestInput};
    use crate::exchange::{exchange_key, request as exchange_request};
    use crate::items::{output_key, small_request, superseded_by};
    use crate::render::tool_label;
    use crate::run::{Exchange, History, Run, EXCHANGE_PROMPT_MAX, EXCHANGE_REPLY_MAX, FIRST_REQUEST_MAX, SUMMARY_MAX};
    use crate::text::{js_len, short_count};
    use serde_json::json;

    /// Tool names are at most 64 characters (Anthropic's and OpenAI's limit
    /// for function names).
    const TOOL_NAME_MAX: usize = 64;

    /// A chunk or item number of seven digits: an output would need millions
    /// of chunks to go past it, and a longer key adds a few characters.
    const KEY_NUMBER: usize = 1_000_000;

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
                    .map(|_| Exchange {
                        user: "u".repeat(EXCHANGE_PROMPT_MAX),
                        assistant: "r".repeat(EXCHANGE_REPLY_MAX),
                    })
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
        tool_label(&"t".repeat(TOOL_NAME_MAX), &json!({ "command": "c".repeat(1000) }))
    }

    /// The longest reason a later call gives for superseding an output.
    fn worst_superseded() -> String {
        let read = json!({ "path": "p" });
        let bash = json!({ "command": "c" });
        [("read", &read, "edit"), ("read", &read, "read"), ("bash", &bash, "bash"), ("other", &read, "other")]
            .into_iter()
            .filter_map(|(tool, args, later)| superseded_by(tool, args, std::iter::once((later, args))))
            .max_by_key(|r| js_len(r))
            .unwrap_or_default()
    }

    fn worst_large(run: &Run, chunks: usize) -> ClassifierContext {
        let arguments = json!({ "command": "c".repeat(2000) });
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
        let key = |i: usize| crate::exchange::exchange_key(KEY_NUMBER + i);
        exchange_request(run, (0..items).map(|i| (key(i), item.clone())).collect())
    }

    /// The JavaScript length of a request as the extension receives it.
    fn chars(request: &ClassifierContext) -> usize {
        // The JSON array's two brackets are not part of the request.
        js_len(&crate::wire::requests(std::slice::from_ref(request), &[])) - 2
    }

    /// Each kind of request at its limits with `items` chunks or items and no segment text.
    fn measured(s: &Settings, items: usize) -> Vec<usize> {
        let mut out = Vec::new();
        for mid_run in [false, true] {
            let run = worst_run(s, mid_run);
            for request in [worst_large(&run, items), worst_small(&run, items), worst_exchanges(&run, items)] {
                out.push(chars(&request));
            }
        }
        out
    }

    fn with(history_exchanges: usize, max_chunks_per_segment: usize) -> Settings {
        Settings { history_exchanges, max_chunks_per_segment, ..Settings::default() }
    }

    fn settings(max_segment_chars: usize) -> Settings {
        Settings { max_segment_chars, model: "fakejev/small".into(), ..Settings::default() }
    }

    #[test]
    fn the_figures_are_what_the_requests_measure() {
        // Each figure from the builders; a request whose text changed fails here with the new ones.
        let base = measured(&with(0, 0), 0).into_iter().max().unwrap();
        let exchange: Vec<usize> =
            measured(&with(2, 0), 0).iter().zip(measured(&with(1, 0), 0)).map(|(two, one)| two - one).collect();
        assert!(exchange.iter().all(|&e| e == exchange[0]), "an exchange costs every kind the same: {exchange:?}");
        let history = measured(&with(1, 0), 0).into_iter().max().unwrap() - exchange[0] - base;
        let mut item = 0;
        for h in [0, 1] {
            let (two, three) = (measured(&with(h, 2), 2), measured(&with(h, 3), 3));
            item = three.iter().zip(&two).map(|(c, b)| c - b).fold(item, usize::max);
        }
        assert_eq!(
            (BASE_CHARS, HISTORY_CHARS, EXCHANGE_CHARS, ITEM_CHARS),
            (base, history, exchange[0], item),
            "the requests' fixed parts changed: set BASE_CHARS, HISTORY_CHARS, EXCHANGE_CHARS, ITEM_CHARS to these"
        );
    }

    #[test]
    fn the_bound_covers_every_kind_of_request() {
        for h in [0, 1, 2, 3, 10] {
            for n in [1, 2, 7, 40, 41, 250, 1000] {
                let s = with(h, n);
                let largest = measured(&s, n).into_iter().max().unwrap();
                let bound = fixed_chars(&s);
                // Never below; above by the kinds' different figures: up to ~1,500 without
                // items, and a small output's 488 an item against a large output's 458 a chunk.
                let slack = 1_500 + 30 * n;
                assert!(largest <= bound && bound - largest <= slack, "h {h}, n {n}: {largest} measured, {bound}");
            }
        }
        // The defaults: a checkpoint's large output with no history (13,816), the history's
        // summary, first request and framing (3,207) and 3 exchanges (3 × 2,027), 40 items at
        // the small output's 488: 42,624. The largest request measured is a run end's large
        // output at 41,423 (its chunks add 458 each).
        assert_eq!(fixed_chars(&Settings::default()), 42_624);
        assert_eq!(measured(&Settings::default(), 40).into_iter().max(), Some(41_423));
        assert_eq!(fixed_chars(&with(1000, usize::MAX)), usize::MAX, "saturates, never wraps");
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
                    let json = crate::wire::requests(std::slice::from_ref(&r), &[]);
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
        // 25,450 tokens at 2.5 characters: 63,625 characters; less the fixed parts
        // (42,624): 21,001, rounded down to 21,000.
        let fit = fit_segment(&settings(40_000), Some(25_450.0));
        assert_eq!(fit.max_segment_chars, 21_000);
        assert_eq!(
            fit.warning.as_deref(),
            Some("maxSegmentChars 40000 is more than the classifier fakejev/small (25,450 tokens) can take; using 21,000")
        );
        // Jev's 32,000 tokens: 80,000 − 42,624 = 37,376, so the default 32,000 stays.
        assert_eq!(fit_segment(&settings(32_000), Some(32_000.0)), Fit { max_segment_chars: 32_000, warning: None });
        // A setting below what fits stays, whatever the window.
        assert_eq!(fit_segment(&settings(20_000), Some(25_450.0)).max_segment_chars, 20_000);
        // Fewer chunks a segment and no history leave more room in the same window.
        let lean = Settings { max_chunks_per_segment: 10, history_exchanges: 0, ..settings(60_000) };
        // 63,625 − (13,816 + 10 × 488) = 44,929: 44,000.
        assert_eq!(fit_segment(&lean, Some(25_450.0)).max_segment_chars, 44_000);
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
        // A fractional window counts its whole tokens: 25,449.9 is 25,449 (63,622: 20,998).
        assert_eq!(fit_segment(&settings(40_000), Some(25_449.9)).max_segment_chars, 20_000);
    }

    #[test]
    fn the_boundary_reads_settings_and_writes_the_fit() {
        let json = r#"{"maxSegmentChars": 40000, "model": "fakejev/small", "modelProvider": "fakejev"}"#;
        assert_eq!(
            fit_json(json, Some(25_450.0)),
            r#"{"maxSegmentChars":21000,"warning":"maxSegmentChars 40000 is more than the classifier fakejev/small (25,450 tokens) can take; using 21,000"}"#
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
