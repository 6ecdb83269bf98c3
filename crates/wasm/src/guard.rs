//! The guard across the boundary: settings, the run-end pass and the mid-run
//! checkpoint (plan, then finish), recall, and the labels and counts the extension shows.
//!
//! Structured values cross as JSON text, like the `/context` report: one
//! `JSON.stringify` and one `JSON.parse` on the JavaScript side, one serde
//! pass here. The run-end pass is shaped by its size instead (see
//! `pass::plan_json`): long texts cross as UTF-8 bytes beside the JSON, the
//! plan stays here as a [`Pass`] between the two steps, and chunk texts go
//! back as ranges of the texts the extension already has. Each export only
//! converts; the types are mirrored in `extension/guard-types.ts`.

use context_guard_base::text;
use std::rc::Rc;

use context_guard_guard::scanned::Scanned;
use context_guard_guard::{checkpoint, pass, render, run, settings};
use context_guard_guard_read::recall;
use wasm_bindgen::prelude::*;

/// `Parsed` (`{ settings, warnings }`) from the settings file's text (`""` for no file).
#[wasm_bindgen(js_name = parseSettings)]
pub fn parse_settings(json: &str) -> String {
    settings::parse_json(json)
}

/// The settings file's text with `enabled` set; throws when the text is not a
/// JSON object (the file is then left as it is).
#[wasm_bindgen(js_name = setEnabled)]
pub fn set_enabled(json: &str, enabled: bool) -> Result<String, JsError> {
    settings::set_enabled(json, enabled).map_err(|e| JsError::new(&e))
}

/// The settings file's text with `model` set (`/guard model <provider/id>`); throws when `model` is not
/// `provider/id` or the text is not a JSON object (the file is then left as it is).
#[wasm_bindgen(js_name = setModel)]
pub fn set_model(json: &str, model: &str) -> Result<String, JsError> {
    settings::set_model(json, model).map_err(|e| JsError::new(&e))
}

/// A run-end pass between its two steps. The plan stays here, inside the
/// wasm module, while the extension asks the classifier: only its requests
/// cross, and `finishPass` reads the rest where it is (see `pass::Planned`).
/// `finishPass` consumes it; otherwise call `free()`. A mid-run checkpoint
/// is the same kind of pass, with what its gates measured beside it.
#[wasm_bindgen]
pub struct Pass {
    planned: pass::Planned,
    /// A checkpoint's `Gate` as JSON text; for a run-end pass only when its
    /// judge was not worth calling (`Gate::of_run_end`).
    gate: Option<String>,
}

#[wasm_bindgen]
impl Pass {
    /// How many tool outputs the pass asks about, then the entries it
    /// would edit, one a line (`PassState::held`).
    #[wasm_bindgen(getter)]
    pub fn held(&self) -> String {
        self.planned.state.held()
    }

    // This doc comment is copied into pkg/'s JS glue, so it keeps the module's
    /// The JSON text of `ClassifierContext[]`, one request each, in order, in
    /// the compact form `guard/wasm.ts` writes out (`wire::requests_compact`:
    /// chunk questions as their wording, parts sent already as `head` and
    /// `questionsOf`); chunks of an out-of-line text come as `[text, start,
    /// end]` (see `pass::plan_json`). Moved out: a second call gives `""`.
    #[wasm_bindgen(js_name = takeRequests)]
    pub fn take_requests(&mut self) -> String {
        std::mem::take(&mut self.planned.requests)
    }

    /// Why there is nothing to ask, if so: `off`, `no-run`, `no-large-outputs`,
    /// `below-min-run-chars`, `no-classifier`; for a checkpoint also
    /// `mid-run-off`, `nothing-eligible`, `below-batch`, `not-paying-off`;
    /// `judge-not-worth-it` for both.
    #[wasm_bindgen(getter)]
    pub fn skipped(&self) -> Option<String> {
        self.planned.skipped.map(|s| s.as_str().to_string())
    }

    /// A checkpoint's `Gate` (JSON text): what its gates measured.
    #[wasm_bindgen(getter)]
    pub fn gate(&self) -> Option<String> {
        self.gate.clone()
    }
}

/// A session's large outputs with the secrets found in them when they
/// arrived (`scanned::Scanned`): a pass or checkpoint planned with it finds
/// only what it does not hold. One per session; `free()` when it ends.
#[wasm_bindgen]
#[derive(Default)]
pub struct Scans {
    scanned: Rc<Scanned>,
}

#[wasm_bindgen]
impl Scans {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Scans {
        Scans::default()
    }

    /// Scans the large tool outputs among the entries of a `PassInput` (in
    /// `planPass`'s form; its `settings` say which are large and the user's
    /// patterns) that are not scanned yet. How many were scanned.
    pub fn note(&mut self, input: &[u8], texts: &[u8], lengths: &[u32]) -> Result<usize, JsError> {
        let input = pass::input_json(input, texts, lengths).map_err(|e| JsError::new(&e))?;
        Ok(Rc::make_mut(&mut self.scanned).note(&input.entries, &input.settings))
    }
}

/// Step one of a run-end pass: the UTF-8 JSON of `PassInput` whose long text
/// blocks are out of line (`{"type":"text","textAt":k}`), the out-of-line
/// texts as UTF-8 one after another, and their byte lengths; `scans`, the
/// secrets of outputs found when they arrived.
#[wasm_bindgen(js_name = planPass)]
pub fn plan_pass(scans: &Scans, input: &[u8], texts: &[u8], lengths: &[u32]) -> Result<Pass, JsError> {
    let planned = pass::plan_json_with(input, texts, lengths, &scans.scanned).map_err(|e| JsError::new(&e))?;
    // A judge not worth calling: its figures for `/guard`, as a checkpoint's skip has them.
    let gate =
        checkpoint::Gate::of_run_end(&planned.state).map(|g| g.to_json()).transpose().map_err(|e| JsError::new(&e))?;
    Ok(Pass { planned, gate })
}

/// Step one of a mid-run checkpoint: as `planPass`, with the JSON of
/// `CheckpointInput` (`PassInput` and `gates`); finished by `finishPass`.
#[wasm_bindgen(js_name = planCheckpoint)]
pub fn plan_checkpoint(scans: &Scans, input: &[u8], texts: &[u8], lengths: &[u32]) -> Result<Pass, JsError> {
    let (planned, gate) =
        checkpoint::plan_json_with(input, texts, lengths, &scans.scanned).map_err(|e| JsError::new(&e))?;
    Ok(Pass { planned, gate: Some(gate.to_json().map_err(|e| JsError::new(&e))?) })
}

/// Before step two, when the judge answered after the boundary the pass was
/// planned at (docs/GUARD.md, "Nobody waits for the judge"): checks and re-weighs the plan against the
/// context now, the `PassInput` in `planPass`'s form, `ms` after planning at
/// the entry `anchor` (`pass::land`). The ids of the items dropped, one a line.
#[wasm_bindgen(js_name = landPass)]
pub fn land_pass(
    pass: &mut Pass,
    input: &[u8],
    texts: &[u8],
    lengths: &[u32],
    anchor: &str,
    ms: f64,
    in_request: bool,
) -> Result<String, JsError> {
    let now = pass::input_json(input, texts, lengths).map_err(|e| JsError::new(&e))?;
    let dropped = pass::land(&mut pass.planned.state, &now, anchor, ms, in_request);
    Ok(dropped.join("\n"))
}

/// Step two: the JSON text of `Outcome` from a planned pass (consumed) and
/// the UTF-8 JSON of the runner's `PassAnswers`.
#[wasm_bindgen(js_name = finishPass)]
pub fn finish_pass(pass: &Pass, answers: &[u8]) -> Result<String, JsError> {
    pass::finish_json(&pass.planned.state, answers).map_err(|e| JsError::new(&e))
}

/// A chat model as the judge: its system prompt.
#[wasm_bindgen(js_name = judgeSystemPrompt)]
pub fn judge_system_prompt() -> String {
    context_guard_guard::judge::SYSTEM.to_string()
}

/// A chat model as the judge: the user message for one request, from the
/// JSON text of its `state` and of its questions as `[id, type,
/// instructions, [[key, text], …]]` lists (`guard::judge::prompt`). Its reply
/// goes back to `finishPass` as a `replied` outcome.
#[wasm_bindgen(js_name = judgePrompt)]
pub fn judge_prompt(state: &str, questions: &str) -> Result<String, JsError> {
    context_guard_guard::judge::prompt(state, questions)
        .ok_or_else(|| JsError::new("judge questions: each must be [id, type, instructions, [[key, text], …]]"))
}

/// A text with its secrets withheld, as a request to the judge would carry
/// it, and what was found (`guard::secrets::withhold_text_json`): for the
/// corpus tests and the benchmark.
#[wasm_bindgen(js_name = withholdSecrets)]
pub fn withhold_secrets(text: &str, patterns: &str) -> String {
    context_guard_scan::secrets::withhold_text_json(text, patterns)
}

/// How many secrets `text` holds (`guard::secrets::Secrets::find`): the
/// step as a pass runs it, for the benchmark, without writing the text back.
#[wasm_bindgen(js_name = countSecrets)]
pub fn count_secrets(text: &str) -> usize {
    context_guard_scan::secrets::Secrets::new(&[]).find(text).len()
}

/// `RecallReply` for a `RecallRequest`.
#[wasm_bindgen(js_name = recall)]
pub fn recall_entry(request: &str) -> Result<String, JsError> {
    recall::recall_json(request).map_err(|e| JsError::new(&e))
}

/// `RecallToolInfo`: the `recall` tool's description and parameter texts.
#[wasm_bindgen(js_name = recallToolInfo)]
pub fn recall_tool_info() -> String {
    recall::tool_info_json()
}

/// How notes and records name a call, such as ``bash `rg -n status` ``, from
/// the tool name and the JSON text of its arguments.
#[wasm_bindgen(js_name = toolLabel)]
pub fn tool_label(tool: &str, args: &str) -> String {
    render::tool_label_json(tool, args)
}

// This doc comment is copied into pkg/'s JS glue, so it keeps the module's
/// The provider requests of each run of a branch (`run::run_lengths`), from
/// one letter per message (`u`, `a`, `t`, `r`, `c`, other): the one
/// definition of a run, for the `median` estimator of later requests.
#[wasm_bindgen(js_name = runLengths)]
pub fn run_lengths(kinds: &[u8]) -> Vec<u32> {
    let kinds: Vec<run::Kind> = kinds.iter().map(|&b| run::Kind::from_byte(b)).collect();
    run::run_lengths(&kinds).into_iter().map(|n| u32::try_from(n).unwrap_or(u32::MAX)).collect()
}

/// For each message (one letter each, as `runLengths` takes them), 1 where it
/// starts a run (`run::starts_run`), else 0: the audit's later requests count
/// runs by the same definition.
#[wasm_bindgen(js_name = runStarts)]
pub fn run_starts(kinds: &[u8]) -> Vec<u8> {
    let kinds: Vec<run::Kind> = kinds.iter().map(|&b| run::Kind::from_byte(b)).collect();
    (0..kinds.len()).map(|i| u8::from(run::starts_run(&kinds, i))).collect()
}

/// A count as notes and the status bar show it: `950`, `1.2k`, `36.1k`, `1.3M`.
#[wasm_bindgen(js_name = shortCount)]
pub fn short_count(n: f64) -> String {
    // Whole, finite and non-negative; larger than any context.
    let n = if n.is_finite() && n > 0.0 { n.round().min(1e15) as usize } else { 0 };
    text::short_count(n)
}

/// The `/guard` report, from the JSON text of a `SummaryInput`.
#[wasm_bindgen(js_name = guardSummary)]
pub fn guard_summary(input: &str) -> Result<String, JsError> {
    context_guard_guard_read::summary::summary_json(input).map_err(|e| JsError::new(&e))
}

/// The guard's net effect on the main model's bill so far: the JSON text of a
/// `guard::bill::BillInput` (the branch's events, the catalog's prices) in, the
/// `Bill` as JSON out.
#[wasm_bindgen(js_name = guardBill)]
pub fn guard_bill(input: &str) -> Result<String, JsError> {
    context_guard_economics::bill::bill_json(input).map_err(|e| JsError::new(&e))
}

/// The one money answer for a net effect in dollars (`guard::bill::answer`):
/// `saved $0.27 on <whose> so far (est.)`. A net that is not finite reads as 0.
#[wasm_bindgen(js_name = moneyAnswer)]
pub fn money_answer(net_usd: f64, whose: &str) -> String {
    let net = if net_usd.is_finite() { net_usd } else { 0.0 };
    context_guard_economics::bill::answer(net, &text::sanitize_line(whose, 80))
}

/// Prices per token from a session's recorded usage (`economics::bill::usage_prices`,
/// the bill's rule) and the rewrite's premium over a read: `[read, write,
/// premium]`, NaN where not recorded. The totals are dollars and tokens: cache
/// reads, cache writes, uncached input.
#[wasm_bindgen(js_name = usagePrices)]
pub fn usage_prices(cost_read: f64, read: f64, cost_write: f64, write: f64, cost_input: f64, input: f64) -> Vec<f64> {
    use context_guard_economics::bill;
    let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
    let sum = bill::Usage {
        input: finite(input),
        cache_read: finite(read),
        cache_write: finite(write),
        cost_input: finite(cost_input),
        cost_read: finite(cost_read),
        cost_write: finite(cost_write),
    };
    let p = bill::usage_prices(&sum);
    let premium = p.read.zip(p.write).map(|(r, w)| bill::premium(r, w));
    [p.read, p.write, premium].map(|x| x.unwrap_or(f64::NAN)).to_vec()
}

/// Distill before compacting: the JSON text of a `guard::compaction::CompactionInput`
/// in, its `Decision` out (whether Pi is about to compact, whether the
/// checkpoint's edits keep it under the threshold, the line `/guard` shows).
#[wasm_bindgen(js_name = beforeCompaction)]
pub fn before_compaction(input: &str) -> Result<String, JsError> {
    context_guard_guard::compaction::decide_json(input).map_err(|e| JsError::new(&e))
}

/// The audit's candidates (`guard::audit`): the same input forms as
/// `planPass` (a whole branch), the JSON of every run end's candidates out.
#[wasm_bindgen(js_name = auditCandidates)]
pub fn audit_candidates(input: &[u8], texts: &[u8], lengths: &[u32]) -> Result<String, JsError> {
    // The entries' texts are copied once more than `texts` holds. Room for them, taken in one step:
    // growing the wasm memory by dlmalloc's 64 KB steps costs a garbage collection of the
    // JavaScript heap each once the host holds a lot of external memory (~5 ms a step measured
    // beside 280 MB of buffers: a 200 MB session took minutes). Freed, the room stays dlmalloc's.
    drop(Vec::<u8>::with_capacity(texts.len().saturating_mul(2).saturating_add(input.len().saturating_mul(8))));
    let input = pass::input_json(input, texts, lengths).map_err(|e| JsError::new(&e))?;
    Ok(context_guard_guard_read::audit::candidates_json(&input))
}
