//! The guard's settings: every key of the settings file with its default, and
//! the validation that turns a file's text into settings plus warnings.
//!
//! For: reading `~/.pi/agent/context-guard.json` (or `PI_CONTEXT_GUARD_CONFIG`)
//! once the extension has read its text, and rewriting `enabled` for
//! `/guard on|off`. Not for: file I/O, or deciding what the guard does with a
//! value (the modules that use a setting cite it).
//!
//! The keys are the original guard's, so its settings files keep working
//! (docs/GUARD.md, "Settings", lists each default). A value that is missing
//! keeps its default silently; one that is the wrong type or out of range
//! keeps its default with a warning that names the key, and so does an
//! unknown key. The ranges:
//!
//! | kind | keys | range |
//! |---|---|---|
//! | probability | `keepWholeThreshold`, `focusWholeThreshold`, `chunkKeepThreshold`, `noneThreshold`, `maxKeepRatio`, `midRunChunkKeepThreshold`, `smallKeepThreshold`, `exchangeOmitThreshold` | number 0–1 |
//! | size in characters | `minResultChars`, `midRunBatchChars`, `midRunBatchCharsOpenAI` | integer 1–1,000,000,000 |
//! | size that `0` turns off | `minRunChars`, `smallResultMinChars`, `exchangeMinSavingChars` | integer 0–1,000,000,000 |
//! | request size | `maxSegmentChars` | integer 1,000–1,000,000 (a chunk is at least 800 characters) |
//! | request size | `maxChunksPerSegment` | integer 1–1,000 |
//! | time | `timeoutMs` | integer 1–600,000 (ten minutes: settling waits for it) |
//! | parallel requests | `concurrency` | integer 1–64 |
//! | turns / exchanges | `historyExchanges` | integer 0–10 (as the original) |
//! | | `midRunMinAgeTurns` | integer 1–100 (as the original) |
//! | | `midRunMinTurns` | integer 1–1000 (issue 20) |
//! | | `keepRecentExchanges`, `imageKeepTurns` | integer 0–1,000 |
//! | tokens that `0` turns off | `midRunRoomTokens`, `midRunRoomMinTokens` | integer 0–100,000,000 |
//! | estimator | `laterRequests` | `"turns"`, `"session"` or `"median"` (`worth::Estimator`) |
//! | switches | `enabled`, `keepCitedFiles`, `distillErrors`, `pinAnthropicCache`, `midRun`, `midRunBreakEven`, `pruneExchanges`, `exchangeBreakEven`, `runEndBreakEven`, `waitForJudge` | boolean |
//! | lists | `excludeTools` | array of strings |
//! | secrets | `secretPatterns` | array of `regex-lite` patterns; one that does not compile is left out, named in a warning |
//! | secrets | `secretFiles` | array of file-name patterns (`*`, `?`) |
//! | classifier | `model` | `provider/id`: the first `/` separates the provider, both parts non-empty |
//!
//! An integer written as `4000.0` is accepted (JavaScript cannot tell it from
//! `4000`); `4000.5` is not.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decimal::short;
use crate::secrets::compile_secret_pattern;
use crate::secrets::files::default_secret_files;

/// The classifier used when `model` is not set (the original guard's default).
pub const DEFAULT_MODEL: &str = "openrouter/~typesafe/jev-latest";

/// All settings of the guard, each with its default (docs/GUARD.md, "Settings").
///
/// Serialized in camelCase with the file's key names, plus `modelProvider` and
/// `modelId` (the two halves of `model`) so the extension need not split it.
///
/// Read back (from the extension, or inside a pass state) through the same
/// validation as the file: [`parse_object`], by hand rather than derived, so a
/// value from JavaScript is checked too and the wasm carries one reader.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "GuardSettings"))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub enabled: bool,
    pub model: String,
    pub model_provider: String,
    pub model_id: String,
    pub min_result_chars: usize,
    pub min_run_chars: usize,
    pub keep_whole_threshold: f64,
    pub focus_whole_threshold: f64,
    pub chunk_keep_threshold: f64,
    pub none_threshold: f64,
    pub max_keep_ratio: f64,
    pub keep_cited_files: bool,
    pub timeout_ms: usize,
    pub concurrency: usize,
    pub max_segment_chars: usize,
    pub max_chunks_per_segment: usize,
    pub exclude_tools: Vec<String>,
    pub distill_errors: bool,
    pub history_exchanges: usize,
    pub pin_anthropic_cache: bool,
    pub mid_run: bool,
    pub mid_run_min_age_turns: usize,
    /// No checkpoint before this turn of a run unless the room trigger lets
    /// it through: a short run stays as it is (issue 20, target a).
    pub mid_run_min_turns: usize,
    pub mid_run_batch_chars: usize,
    #[serde(rename = "midRunBatchCharsOpenAI")]
    pub mid_run_batch_chars_openai: usize,
    pub mid_run_chunk_keep_threshold: f64,
    pub mid_run_break_even: bool,
    /// The room trigger (issue 20): past this many tokens of context, a
    /// checkpoint whose batch is expected to take out at least
    /// `midRunRoomMinTokens` runs without the money rule. 0: off.
    pub mid_run_room_tokens: usize,
    pub mid_run_room_min_tokens: usize,
    /// How the money rule estimates the requests still to come (`worth`).
    pub later_requests: crate::worth::Estimator,
    pub small_result_min_chars: usize,
    pub small_keep_threshold: f64,
    pub prune_exchanges: bool,
    pub keep_recent_exchanges: usize,
    pub exchange_omit_threshold: f64,
    pub exchange_break_even: bool,
    /// Issue 26: at run end, large and small outputs go through the
    /// money rule (`pass::gate`); what does not pay now waits. Off: they go
    /// whatever the rewrite costs, as in the original guard. Without prices they go.
    pub run_end_break_even: bool,
    /// Issue 27: checkpoints and run ends wait for the judge's answers,
    /// as before that issue. Off (the default): the judge works in the
    /// background and its edits land at a later boundary (`pass::land`).
    pub wait_for_judge: bool,
    pub exchange_min_saving_chars: usize,
    pub image_keep_turns: usize,
    /// The user's own secret patterns, besides the built-in rules (`secrets`).
    pub secret_patterns: Vec<String>,
    /// Files whose outputs are never sent to the judge (`secrets::secret_file`).
    pub secret_files: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            enabled: true,
            model: DEFAULT_MODEL.to_string(),
            model_provider: "openrouter".to_string(),
            model_id: "~typesafe/jev-latest".to_string(),
            min_result_chars: 4000,
            min_run_chars: 8000,
            keep_whole_threshold: 0.7,
            focus_whole_threshold: 0.6,
            chunk_keep_threshold: 0.6,
            none_threshold: 0.5,
            max_keep_ratio: 0.6,
            keep_cited_files: false,
            timeout_ms: 8000,
            concurrency: 6,
            max_segment_chars: 32_000,
            max_chunks_per_segment: 40,
            exclude_tools: vec!["edit".to_string(), "write".to_string()],
            distill_errors: true,
            history_exchanges: 3,
            pin_anthropic_cache: true,
            mid_run: true,
            // The original guard's was 4; the economy suite chose 1 (docs/GUARD.md, "When an edit pays off").
            mid_run_min_age_turns: 1,
            // The economy suite's choice: runs of at most 8 requests never see a checkpoint.
            mid_run_min_turns: 8,
            mid_run_batch_chars: 10_000,
            mid_run_batch_chars_openai: 60_000,
            mid_run_chunk_keep_threshold: 0.6,
            mid_run_break_even: true,
            mid_run_room_tokens: ROOM_TOKENS,
            mid_run_room_min_tokens: ROOM_MIN_TOKENS,
            later_requests: crate::worth::Estimator::Median,
            small_result_min_chars: 400,
            small_keep_threshold: 0.45,
            prune_exchanges: true,
            keep_recent_exchanges: 2,
            exchange_omit_threshold: 0.2,
            exchange_break_even: true,
            run_end_break_even: true,
            wait_for_judge: false,
            exchange_min_saving_chars: 8000,
            image_keep_turns: 3,
            secret_patterns: Vec::new(),
            secret_files: default_secret_files(),
        }
    }
}

/// Settings read from a file's text, with one warning per ignored value.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "ParsedSettings"))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Parsed {
    pub settings: Settings,
    pub warnings: Vec<String>,
}

const MAX_CHARS: usize = 1_000_000_000;
const MAX_TOKENS: usize = 100_000_000;

/// The room trigger's defaults (issue 20), chosen on the economy suite
/// (docs/GUARD.md, "When an edit pays off"). Anthropic's context editing
/// clears tool results from 100,000 input tokens by default; on the suite
/// 40,000 cost less on Anthropic and changed nothing on OpenAI.
pub const ROOM_TOKENS: usize = 40_000;
pub const ROOM_MIN_TOKENS: usize = 10_000;

/// Reads settings from the text of the settings file.
///
/// Empty or whitespace-only text means "no settings" (the defaults, no
/// warning), so the extension can pass `""` for a missing file. Anything else
/// that is not a JSON object gives the defaults and one warning.
pub fn parse(json: &str) -> (Settings, Vec<String>) {
    let mut settings = Settings::default();
    let mut warnings = Vec::new();
    if json.trim().is_empty() {
        return (settings, warnings);
    }
    let value: Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => {
            warnings.push(format!("the settings file is not valid JSON ({e}); using the defaults"));
            return (settings, warnings);
        }
    };
    let Value::Object(map) = value else {
        warnings.push("the settings file must hold a JSON object; using the defaults".to_string());
        return (settings, warnings);
    };
    for (key, value) in &map {
        apply(&mut settings, key, value, &mut warnings);
    }
    (settings, warnings)
}

/// Settings from an object such as [`Settings`] serializes to: every key
/// validated like the file's; `modelProvider` and `modelId` are derived from
/// `model`, so they are skipped here. Warnings are dropped.
pub fn parse_object(map: &serde_json::Map<String, Value>) -> Settings {
    let mut settings = Settings::default();
    let mut warnings = Vec::new();
    for (key, value) in map {
        if key != "modelProvider" && key != "modelId" {
            apply(&mut settings, key, value, &mut warnings);
        }
    }
    settings
}

impl Settings {
    /// Read through the same validation as [`parse`]; anything but an object
    /// gives the defaults.
    pub fn from_value(v: Value) -> Settings {
        match v {
            Value::Object(map) => parse_object(&map),
            _ => Settings::default(),
        }
    }
}

impl<'de> Deserialize<'de> for Settings {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Settings::from_value)
    }
}

/// [`parse`] as the JSON text of [`Parsed`], for the boundary.
pub fn parse_json(json: &str) -> String {
    let (settings, warnings) = parse(json);
    serde_json::to_string(&Parsed { settings, warnings }).unwrap_or_default()
}

fn apply(s: &mut Settings, key: &str, v: &Value, w: &mut Vec<String>) {
    let d = Settings::default();
    match key {
        "enabled" => s.enabled = boolean(key, v, d.enabled, w),
        "model" => match v.as_str().and_then(split_model) {
            Some((provider, id)) => {
                s.model = format!("{provider}/{id}");
                s.model_provider = provider.to_string();
                s.model_id = id.to_string();
            }
            None => w.push(format!("\"model\" must be a string \"provider/id\"; using the default \"{}\"", d.model)),
        },
        "minResultChars" => s.min_result_chars = int(key, v, 1, MAX_CHARS, d.min_result_chars, w),
        "minRunChars" => s.min_run_chars = int(key, v, 0, MAX_CHARS, d.min_run_chars, w),
        "keepWholeThreshold" => s.keep_whole_threshold = prob(key, v, d.keep_whole_threshold, w),
        "focusWholeThreshold" => s.focus_whole_threshold = prob(key, v, d.focus_whole_threshold, w),
        "chunkKeepThreshold" => s.chunk_keep_threshold = prob(key, v, d.chunk_keep_threshold, w),
        "noneThreshold" => s.none_threshold = prob(key, v, d.none_threshold, w),
        "maxKeepRatio" => s.max_keep_ratio = prob(key, v, d.max_keep_ratio, w),
        "keepCitedFiles" => s.keep_cited_files = boolean(key, v, d.keep_cited_files, w),
        "timeoutMs" => s.timeout_ms = int(key, v, 1, 600_000, d.timeout_ms, w),
        "concurrency" => s.concurrency = int(key, v, 1, 64, d.concurrency, w),
        "maxSegmentChars" => s.max_segment_chars = int(key, v, 1000, 1_000_000, d.max_segment_chars, w),
        "maxChunksPerSegment" => s.max_chunks_per_segment = int(key, v, 1, 1000, d.max_chunks_per_segment, w),
        "excludeTools" => match v.as_array().and_then(|a| a.iter().map(|t| t.as_str().map(str::to_string)).collect()) {
            Some(tools) => s.exclude_tools = tools,
            None => {
                // As `{:?}` would list them, without pulling `Debug` for strings into the wasm.
                let quoted: Vec<String> = d.exclude_tools.iter().map(|t| format!("\"{t}\"")).collect();
                w.push(format!(
                    "\"excludeTools\" must be an array of tool names; using the default [{}]",
                    crate::text::join(&quoted, ", ")
                ))
            }
        },
        "distillErrors" => s.distill_errors = boolean(key, v, d.distill_errors, w),
        "historyExchanges" => s.history_exchanges = int(key, v, 0, 10, d.history_exchanges, w),
        "pinAnthropicCache" => s.pin_anthropic_cache = boolean(key, v, d.pin_anthropic_cache, w),
        "midRun" => s.mid_run = boolean(key, v, d.mid_run, w),
        "midRunMinAgeTurns" => s.mid_run_min_age_turns = int(key, v, 1, 100, d.mid_run_min_age_turns, w),
        "midRunMinTurns" => s.mid_run_min_turns = int(key, v, 1, 1000, d.mid_run_min_turns, w),
        "midRunBatchChars" => s.mid_run_batch_chars = int(key, v, 1, MAX_CHARS, d.mid_run_batch_chars, w),
        "midRunBatchCharsOpenAI" => {
            s.mid_run_batch_chars_openai = int(key, v, 1, MAX_CHARS, d.mid_run_batch_chars_openai, w)
        }
        "midRunChunkKeepThreshold" => s.mid_run_chunk_keep_threshold = prob(key, v, d.mid_run_chunk_keep_threshold, w),
        "midRunBreakEven" => s.mid_run_break_even = boolean(key, v, d.mid_run_break_even, w),
        "midRunRoomTokens" => s.mid_run_room_tokens = int(key, v, 0, MAX_TOKENS, d.mid_run_room_tokens, w),
        "midRunRoomMinTokens" => s.mid_run_room_min_tokens = int(key, v, 0, MAX_TOKENS, d.mid_run_room_min_tokens, w),
        "laterRequests" => match v.as_str().and_then(crate::worth::Estimator::parse) {
            Some(e) => s.later_requests = e,
            None => w.push(format!(
                "\"laterRequests\" must be \"turns\", \"session\" or \"median\"; using \"{}\"",
                d.later_requests.as_str()
            )),
        },
        "smallResultMinChars" => s.small_result_min_chars = int(key, v, 0, MAX_CHARS, d.small_result_min_chars, w),
        "smallKeepThreshold" => s.small_keep_threshold = prob(key, v, d.small_keep_threshold, w),
        "pruneExchanges" => s.prune_exchanges = boolean(key, v, d.prune_exchanges, w),
        "keepRecentExchanges" => s.keep_recent_exchanges = int(key, v, 0, 1000, d.keep_recent_exchanges, w),
        "exchangeOmitThreshold" => s.exchange_omit_threshold = prob(key, v, d.exchange_omit_threshold, w),
        "exchangeBreakEven" => s.exchange_break_even = boolean(key, v, d.exchange_break_even, w),
        "runEndBreakEven" => s.run_end_break_even = boolean(key, v, d.run_end_break_even, w),
        "waitForJudge" => s.wait_for_judge = boolean(key, v, d.wait_for_judge, w),
        "exchangeMinSavingChars" => {
            s.exchange_min_saving_chars = int(key, v, 0, MAX_CHARS, d.exchange_min_saving_chars, w)
        }
        "imageKeepTurns" => s.image_keep_turns = int(key, v, 0, 1000, d.image_keep_turns, w),
        "secretPatterns" => match v.as_array() {
            Some(list) => {
                s.secret_patterns.clear();
                for p in list {
                    match p.as_str().map(|t| (t, compile_secret_pattern(t))) {
                        Some((t, Ok(_))) => s.secret_patterns.push(t.to_string()),
                        Some((t, Err(why))) => {
                            w.push(format!("\"secretPatterns\": the pattern {} is left out: {why}", quoted(t)))
                        }
                        None => w.push("\"secretPatterns\": an entry that is not a string is left out".to_string()),
                    }
                }
            }
            None => w.push("\"secretPatterns\" must be an array of patterns; using none".to_string()),
        },
        "secretFiles" => match v.as_array().and_then(|a| a.iter().map(|t| t.as_str().map(str::to_string)).collect()) {
            Some(files) => s.secret_files = files,
            None => {
                w.push("\"secretFiles\" must be an array of file-name patterns; using the default list".to_string())
            }
        },
        _ => w.push(format!("unknown key {} ignored", quoted(key))),
    }
}

/// `provider/id` split at the first `/`; `None` unless both halves are there.
pub fn split_model(model: &str) -> Option<(&str, &str)> {
    let (provider, id) = model.trim().split_once('/')?;
    (!provider.is_empty() && !id.is_empty()).then_some((provider, id))
}

fn boolean(key: &str, v: &Value, default: bool, w: &mut Vec<String>) -> bool {
    v.as_bool().unwrap_or_else(|| {
        w.push(format!("\"{key}\" must be true or false; using the default {default}"));
        default
    })
}

fn prob(key: &str, v: &Value, default: f64, w: &mut Vec<String>) -> f64 {
    match v.as_f64() {
        Some(p) if (0.0..=1.0).contains(&p) => p,
        _ => {
            // `short`, not `{default}`: the defaults have at most two decimals,
            // and `Display` for floats is kilobytes of the `.wasm`.
            w.push(format!("\"{key}\" must be a number from 0 to 1; using the default {}", short(default)));
            default
        }
    }
}

fn int(key: &str, v: &Value, min: usize, max: usize, default: usize, w: &mut Vec<String>) -> usize {
    let ok = v.as_f64().filter(|n| n.fract() == 0.0 && *n >= min as f64 && *n <= max as f64);
    match ok {
        // In range and whole, so the conversion is exact.
        Some(n) => n as usize,
        None => {
            w.push(format!("\"{key}\" must be a whole number from {min} to {max}; using the default {default}"));
            default
        }
    }
}

/// A key as JSON shows it, clipped: an unknown key came from the user's file
/// and goes into a notification.
fn quoted(key: &str) -> String {
    let clipped = crate::text::sanitize_line(key, 60);
    serde_json::to_string(&clipped).unwrap_or_else(|_| format!("\"{clipped}\""))
}

/// The settings file's text with `enabled` set, every other key kept in its
/// place (for `/guard on` and `/guard off`).
///
/// Empty text gives a new file. Text that is not a JSON object is an error, so
/// the extension can say so instead of overwriting the user's file.
pub fn set_enabled(json: &str, enabled: bool) -> Result<String, String> {
    set_key(json, "enabled", Value::Bool(enabled))
}

/// The settings file's text with `model` set (for `/guard model <provider/id>`), as
/// [`set_enabled`] does; `model` must be `provider/id`, as the file's key must.
pub fn set_model(json: &str, model: &str) -> Result<String, String> {
    let Some((provider, id)) = split_model(model) else {
        return Err(format!("{} is not a model as \"provider/id\"; the settings file was not changed", quoted(model)));
    };
    set_key(json, "model", Value::String(format!("{provider}/{id}")))
}

/// The text with `key` set to `value` in its place, or first when new.
fn set_key(json: &str, key: &str, new: Value) -> Result<String, String> {
    let mut entries: Vec<(String, Value)> = if json.trim().is_empty() {
        Vec::new()
    } else {
        let OrderedObject(entries) = serde_json::from_str(json)
            .map_err(|e| format!("the settings file is not a valid JSON object ({e}); it was not changed"))?;
        entries
    };
    let mut found = false;
    for (k, value) in entries.iter_mut() {
        if k == key {
            *value = new.clone();
            found = true;
        }
    }
    if !found {
        entries.insert(0, (key.to_string(), new));
    }
    let mut out = String::from("{\n");
    for (i, (key, value)) in entries.iter().enumerate() {
        out.push_str("  ");
        out.push_str(&serde_json::to_string(key).map_err(|e| e.to_string())?);
        out.push_str(": ");
        pretty(value, "  ", &mut out)?;
        out.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
    }
    out.push_str("}\n");
    Ok(out)
}

/// `value` as `serde_json::to_string_pretty` writes it (two spaces a level,
/// `"key": value`, `[]` and `{}` when empty), each line after the first
/// indented by `indent`. Written here: the pretty serializer is a second
/// copy of serde_json's writer in the `.wasm`, for this one file.
fn pretty(value: &Value, indent: &str, out: &mut String) -> Result<(), String> {
    let inner = format!("{indent}  ");
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.push_str(&inner);
                pretty(item, &inner, out)?;
            }
            out.push('\n');
            out.push_str(indent);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.push_str(&inner);
                out.push_str(&serde_json::to_string(key).map_err(|e| e.to_string())?);
                out.push_str(": ");
                pretty(item, &inner, out)?;
            }
            out.push('\n');
            out.push_str(indent);
            out.push('}');
        }
        other => out.push_str(&serde_json::to_string(other).map_err(|e| e.to_string())?),
    }
    Ok(())
}

/// A JSON object read with its keys in file order (serde_json's `Map` sorts
/// them, which would reorder the user's file on `/guard off`).
struct OrderedObject(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for OrderedObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        /// Anything but an object is refused with serde_json's own words
        /// (`invalid type: integer `1`, expected a JSON object`), written
        /// here: serde's default refusal formats floats with `core::fmt`'s
        /// float code, kilobytes of the `.wasm` that nothing else needs.
        fn refuse<E: Error>(what: &str) -> E {
            E::custom(format!("invalid type: {what}, expected a JSON object"))
        }
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = OrderedObject;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<OrderedObject, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    entries.push((k, v));
                }
                Ok(OrderedObject(entries))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> Result<OrderedObject, A::Error> {
                Err(refuse("sequence"))
            }
            fn visit_unit<E: Error>(self) -> Result<OrderedObject, E> {
                Err(refuse("null"))
            }
            fn visit_bool<E: Error>(self, b: bool) -> Result<OrderedObject, E> {
                Err(refuse(&format!("boolean `{b}`")))
            }
            fn visit_i64<E: Error>(self, n: i64) -> Result<OrderedObject, E> {
                Err(refuse(&format!("integer `{n}`")))
            }
            fn visit_u64<E: Error>(self, n: u64) -> Result<OrderedObject, E> {
                Err(refuse(&format!("integer `{n}`")))
            }
            fn visit_f64<E: Error>(self, x: f64) -> Result<OrderedObject, E> {
                // serde_json writes the float as it serializes one (`1.5`, `1e20`).
                let x = serde_json::to_string(&x).unwrap_or_default();
                Err(refuse(&format!("floating point `{x}`")))
            }
            fn visit_str<E: Error>(self, s: &str) -> Result<OrderedObject, E> {
                Err(refuse(&format!("string {s:?}")))
            }
        }
        d.deserialize_any(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_json_reads_and_refuses_as_a_typed_from_str() {
        for text in ["{\"minResultChars\": 5000}", "[1]", "{", "{} x", "", "{\"a\": 1e999}", "\"\\u12\""] {
            let typed = serde_json::from_str::<Settings>(text).map_err(|e| e.to_string());
            let read = crate::read::from_json(text, Settings::from_value).map_err(|e| e.to_string());
            assert_eq!(read, typed, "{text}");
        }
    }

    #[test]
    fn defaults_match_the_reference_table() {
        let s = Settings::default();
        assert!(s.enabled);
        assert_eq!(s.model, "openrouter/~typesafe/jev-latest");
        assert_eq!((s.model_provider.as_str(), s.model_id.as_str()), ("openrouter", "~typesafe/jev-latest"));
        assert_eq!((s.min_result_chars, s.min_run_chars), (4000, 8000));
        assert_eq!((s.keep_whole_threshold, s.focus_whole_threshold), (0.7, 0.6));
        assert_eq!((s.chunk_keep_threshold, s.none_threshold, s.max_keep_ratio), (0.6, 0.5, 0.6));
        assert_eq!((s.timeout_ms, s.concurrency, s.max_segment_chars, s.max_chunks_per_segment), (8000, 6, 32_000, 40));
        assert_eq!(s.exclude_tools, ["edit", "write"]);
        assert!(s.distill_errors && !s.keep_cited_files);
        assert_eq!(s.history_exchanges, 3);
        assert_eq!((s.mid_run_min_age_turns, s.mid_run_batch_chars, s.mid_run_batch_chars_openai), (1, 10_000, 60_000));
        assert_eq!(s.mid_run_min_turns, 8);
        assert_eq!((s.small_result_min_chars, s.small_keep_threshold), (400, 0.45));
        assert_eq!((s.keep_recent_exchanges, s.exchange_omit_threshold, s.exchange_min_saving_chars), (2, 0.2, 8000));
        assert_eq!(s.image_keep_turns, 3);
        let (parsed, warnings) = parse("");
        assert_eq!(parsed, s);
        assert!(warnings.is_empty());
    }

    #[test]
    fn every_key_of_the_reference_round_trips() {
        let s = Settings::default();
        let json = serde_json::to_string(&s).unwrap();
        let (back, warnings) = parse(&json);
        // modelProvider and modelId are output only: the file has `model`.
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings.iter().all(|w| w.contains("modelProvider") || w.contains("modelId")));
        assert_eq!(back, s);
    }

    #[test]
    fn valid_values_are_taken() {
        let (s, w) = parse(
            r#"{ "minResultChars": 6000, "excludeTools": ["edit", "write", "bash"], "model": "typesafe/jev/x",
                 "historyExchanges": 0, "keepWholeThreshold": 1, "timeoutMs": 2000.0, "enabled": false }"#,
        );
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s.min_result_chars, 6000);
        assert_eq!(s.exclude_tools, ["edit", "write", "bash"]);
        assert_eq!((s.model_provider.as_str(), s.model_id.as_str()), ("typesafe", "jev/x"));
        assert_eq!(s.history_exchanges, 0);
        assert_eq!(s.keep_whole_threshold, 1.0);
        assert_eq!(s.timeout_ms, 2000);
        assert!(!s.enabled);
    }

    #[test]
    fn bad_values_fall_back_with_a_warning_naming_the_key() {
        let (s, w) = parse(
            r#"{ "minResultChars": -1, "chunkKeepThreshold": 1.5, "historyExchanges": 11, "midRunMinAgeTurns": 0,
                 "concurrency": 2.5, "enabled": "yes", "model": "noslash", "excludeTools": ["a", 3], "typo": 1,
                 "midRunRoomTokens": -5, "midRunRoomMinTokens": 100000001, "laterRequests": "mean",
                 "midRunMinTurns": 0 }"#,
        );
        assert_eq!(s, Settings::default());
        for key in [
            "midRunMinTurns",
            "midRunRoomTokens",
            "midRunRoomMinTokens",
            "laterRequests",
            "minResultChars",
            "chunkKeepThreshold",
            "historyExchanges",
            "midRunMinAgeTurns",
            "concurrency",
            "enabled",
            "model",
            "excludeTools",
            "typo",
        ] {
            assert!(w.iter().any(|m| m.contains(&format!("\"{key}\""))), "no warning for {key}: {w:?}");
        }
        assert_eq!(w.len(), 13);
        assert!(
            w.iter().any(|m| m == "\"laterRequests\" must be \"turns\", \"session\" or \"median\"; using \"median\""),
            "{w:?}"
        );
    }

    #[test]
    fn the_money_rules_settings() {
        let (s, w) = parse(r#"{ "midRunRoomTokens": 0, "midRunRoomMinTokens": 5000.0, "laterRequests": "session" }"#);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!((s.mid_run_room_tokens, s.mid_run_room_min_tokens), (0, 5000));
        assert_eq!(s.later_requests, crate::worth::Estimator::Session);
        let d = Settings::default();
        assert_eq!(
            (d.mid_run_room_tokens, d.mid_run_room_min_tokens, d.later_requests.as_str()),
            (ROOM_TOKENS, ROOM_MIN_TOKENS, "median")
        );
    }

    #[test]
    fn settings_read_back_through_the_same_validation() {
        let custom = Settings { min_result_chars: 6000, model: "a/b".into(), ..Settings::default() };
        let custom = Settings { model_provider: "a".into(), model_id: "b".into(), ..custom };
        let back: Settings = serde_json::from_value(serde_json::to_value(&custom).unwrap()).unwrap();
        assert_eq!(back, custom);
        let bad: Settings = serde_json::from_str(r#"{"chunkKeepThreshold": 7, "minResultChars": 5}"#).unwrap();
        assert_eq!(bad, Settings { min_result_chars: 5, ..Settings::default() });
        let not_object: Settings = serde_json::from_str("[]").unwrap();
        assert_eq!(not_object, Settings::default());
    }

    #[test]
    fn malformed_json_gives_the_defaults_and_one_warning() {
        for text in ["{", "[1,2]", "null", "\"x\"", "{\"a\":}"] {
            let (s, w) = parse(text);
            assert_eq!(s, Settings::default());
            assert_eq!(w.len(), 1, "{text}: {w:?}");
        }
    }

    #[test]
    fn model_splits_at_the_first_slash() {
        assert_eq!(split_model("openrouter/~typesafe/jev-latest"), Some(("openrouter", "~typesafe/jev-latest")));
        assert_eq!(split_model("/x"), None);
        assert_eq!(split_model("x/"), None);
        assert_eq!(split_model("x"), None);
    }

    #[test]
    fn set_enabled_keeps_the_other_keys_in_order() {
        let text = "{ \"minResultChars\": 6000, \"enabled\": true, \"excludeTools\": [\"edit\"] }";
        let out = set_enabled(text, false).unwrap();
        assert_eq!(
            out,
            "{\n  \"minResultChars\": 6000,\n  \"enabled\": false,\n  \"excludeTools\": [\n    \"edit\"\n  ]\n}\n"
        );
        let (s, w) = parse(&out);
        assert!(w.is_empty());
        assert!(!s.enabled);
        assert_eq!(s.min_result_chars, 6000);

        let added = set_enabled("{\"b\": 1, \"a\": 2}", true).unwrap();
        assert_eq!(added, "{\n  \"enabled\": true,\n  \"b\": 1,\n  \"a\": 2\n}\n");
        assert_eq!(set_enabled("  ", false).unwrap(), "{\n  \"enabled\": false\n}\n");
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them_pretty() {
        let values = serde_json::json!([
            [], {}, null, true, -3, 1.5, 1e20, "a\"\n\u{1F600}",
            [1, [2, []], {"z": {}, "a": [null, {"k": "v"}]}],
            {"nested": {"deeper": [[], [[]], {"x": [1, 2]}]}, "": 0}
        ]);
        for v in values.as_array().unwrap().iter().chain([&values]) {
            let mut written = String::new();
            pretty(v, "  ", &mut written).unwrap();
            let expected = serde_json::to_string_pretty(v).unwrap().replace('\n', "\n  ");
            assert_eq!(written, expected);
        }
    }

    #[test]
    fn set_model_writes_provider_and_id_and_refuses_anything_else() {
        let out = set_model(
            "{ \"enabled\": true, \"model\": \"openrouter/~typesafe/jev-latest\" }",
            " anthropic/claude-haiku-4-5 ",
        )
        .unwrap();
        assert_eq!(out, "{\n  \"enabled\": true,\n  \"model\": \"anthropic/claude-haiku-4-5\"\n}\n");
        let (s, w) = parse(&out);
        assert!(w.is_empty());
        assert_eq!((s.model_provider.as_str(), s.model_id.as_str()), ("anthropic", "claude-haiku-4-5"));
        assert_eq!(set_model("", "openai/gpt-5-mini").unwrap(), "{\n  \"model\": \"openai/gpt-5-mini\"\n}\n");
        for bad in ["anthropic", "/x", "x/", ""] {
            let err = set_model("{}", bad).unwrap_err();
            assert!(err.contains("is not a model as \"provider/id\""), "{err}");
        }
        assert!(set_model("[]", "a/b").unwrap_err().contains("not changed"));
    }

    #[test]
    fn set_enabled_refuses_malformed_text() {
        for text in ["{", "[]", "1", "{\"a\": nope}"] {
            let err = set_enabled(text, true).unwrap_err();
            assert!(err.contains("not changed"), "{err}");
        }
    }

    #[test]
    fn set_enabled_names_what_the_file_holds_instead_of_an_object() {
        let said = |text: &str| set_enabled(text, true).unwrap_err();
        let cases = [
            // The '[' itself (serde's refusal pointed before it, at column 0).
            ("[1, 2]", "invalid type: sequence, expected a JSON object at line 1 column 1"),
            ("null", "invalid type: null, expected a JSON object at line 1 column 4"),
            ("true", "invalid type: boolean `true`, expected a JSON object at line 1 column 4"),
            ("-3", "invalid type: integer `-3`, expected a JSON object at line 1 column 2"),
            ("12", "invalid type: integer `12`, expected a JSON object at line 1 column 2"),
            ("1.5", "invalid type: floating point `1.5`, expected a JSON object at line 1 column 3"),
            ("1e300", "invalid type: floating point `1e+300`, expected a JSON object at line 1 column 5"),
            ("\"a\\\"b\"", "invalid type: string \"a\\\"b\", expected a JSON object at line 1 column 6"),
        ];
        for (text, message) in cases {
            assert_eq!(
                said(text),
                format!("the settings file is not a valid JSON object ({message}); it was not changed")
            );
        }
    }

    #[test]
    fn secret_patterns_and_files_are_validated() {
        let (s, w) =
            parse(r#"{ "secretPatterns": ["acme_[a-z0-9]{12}", "(unclosed", 3, ""], "secretFiles": ["*.secret"] }"#);
        assert_eq!(s.secret_patterns, ["acme_[a-z0-9]{12}"]);
        assert_eq!(s.secret_files, ["*.secret"]);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].starts_with("\"secretPatterns\": the pattern \"(unclosed\" is left out: "), "{}", w[0]);
        assert_eq!(w[1], "\"secretPatterns\": an entry that is not a string is left out");
        assert!(w[2].contains("empty pattern"));
        let (d, w) = parse(r#"{ "secretPatterns": "x", "secretFiles": [1] }"#);
        assert_eq!((d.secret_patterns.len(), d.secret_files, w.len()), (0, default_secret_files(), 2));
        // Through the pass state and back, as the extension sends them.
        let back = Settings::from_value(serde_json::to_value(&s).unwrap());
        assert_eq!(back.secret_patterns, s.secret_patterns);
        assert_eq!(back.secret_files, s.secret_files);
    }
}
