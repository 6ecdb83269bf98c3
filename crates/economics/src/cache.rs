//! The prompt cache as the guard's cost rules see it: how much of the context
//! an edit makes the main model's provider write again (docs/GUARD.md, "When
//! an edit pays off" and "The cache pin (Anthropic)"), and the break-even
//! decisions that weigh it, as the record keeps them.
//!
//! For: the one rewrite measure every break-even reads ([`Rewrite`]), by the
//! main model's provider and, for Anthropic, the cache pin's read points; the
//! checkpoint's break-even factor; [`BreakEven`], one decision with its
//! numbers (for the record and `/guard`). Not for: the rules that weigh it
//! (`exchange::run_end_break_even` at run end for exchanges and old images,
//! `checkpoint` mid-run) or placing cache breakpoints (the pin, `pin`).

use serde::Serialize;
use serde_json::Value;

use crate::entry::{Block, Content, ContextEntry, Message};
use crate::read::Fields;
use crate::worth::{self, Edit, Prices};

/// The main model (Pi's `ctx.model`), as far as its prompt cache matters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MainModel {
    /// Pi's provider id, such as `openai-codex`, `anthropic`.
    pub provider: String,
    /// Pi's API id, such as `anthropic-messages`, `openai-codex-responses`.
    pub api: String,
    /// `pinAnthropicCache`: the pin places the question's breakpoint and the
    /// read points. Off, an Anthropic edit rewrites the whole context (Pi marks
    /// only the system prompt, the tools and the last message).
    pub pin: bool,
    /// The tool_use ids (as Anthropic sees them) of the cache entries the
    /// pin's log holds for this model within the TTL, unchanged at the last
    /// request: the next request reads the context up to each of them.
    pub read_points: Vec<String>,
    /// Pi's estimate of the context now, in tokens (`ctx.getContextUsage()`):
    /// the catalog's price tier and the room trigger read it.
    pub context_tokens: usize,
    /// The model's prices (`model.cost` from Pi's catalog, the tier for
    /// `context_tokens`), for the money rule (`worth`).
    #[serde(rename = "cost")]
    pub prices: Prices,
    /// Milliseconds from the last request of this model to the prompt now
    /// starting a run (Pi's message `timestamp`s); `None` anywhere else, and
    /// when unknown: then the cache is never taken for lapsed.
    #[serde(skip)]
    pub idle_ms: Option<usize>,
    /// Pi's long cache retention (`PI_CACHE_RETENTION=long`, or `ttl: "1h"` on
    /// the last request's `cache_control`).
    #[serde(skip)]
    pub long_retention: bool,
    /// Pi 1.6's `cacheWarming` setting (`off`, `streaming`, `idle`; "" for a
    /// Pi without it) and the lifetime the model declares for its retention
    /// tier (`model.promptCache`, in ms; 0 none): see [`MainModel::lapsed`].
    #[serde(skip)]
    pub cache_warming: String,
    #[serde(skip)]
    pub prompt_cache_ms: usize,
    /// The pass runs before the first request of a prompt, for what waits
    /// for a cold cache: it plans nothing unless the cache has lapsed.
    #[serde(skip)]
    pub opening: bool,
}

/// Pi 1.6's idle cache warming refreshes an eligible cache for at most this
/// long after the request that wrote it (pi-ai `CACHE_WARMING_MAX_IDLE_AGE_MS`).
const WARMING_IDLE_MS: usize = 30 * 60_000;
const MINUTE_MS: usize = 60_000;

impl MainModel {
    /// Read leniently: a missing or wrong-typed field reads as empty or false.
    pub fn from_value(v: Value) -> MainModel {
        let mut f = Fields::of(v);
        let context_tokens = f.count("contextTokens");
        let prices = Prices::from_cost(&f.take("cost"), context_tokens);
        MainModel {
            provider: f.string("provider"),
            api: f.string("api"),
            pin: f.boolean("pin"),
            // An item that is not a string reads as "", which no tool_use id Pi sends is.
            read_points: f.list("readPoints", |p| p.as_str().map(str::to_string).unwrap_or_default()),
            context_tokens,
            prices,
            // Absent, or not a whole number ≥ 0 (a clock that went backwards): unknown.
            idle_ms: f.take("idleMs").as_u64().and_then(|n| usize::try_from(n).ok()),
            long_retention: f.boolean("longRetention"),
            cache_warming: f.string("cacheWarming"),
            prompt_cache_ms: f.count("promptCacheMs"),
            opening: f.boolean("opening"),
        }
    }

    /// How long the provider keeps a cache entry after its last use, in ms.
    /// Anthropic: 5 minutes, 1 hour with long retention (its documentation).
    /// OpenAI: "5 to 10 minutes of inactivity", 24 hours with
    /// `prompt_cache_retention: "24h"`; the long end, 10 minutes, because
    /// taking a live cache for lapsed costs a rewrite, while waiting too long
    /// only misses a free edit. Others: 5 minutes, 1 hour long. A longer
    /// lifetime the model declares (`promptCache`) wins.
    pub fn ttl_ms(&self) -> usize {
        let openai = self.provider.starts_with("openai")
            || self.api.starts_with("openai-")
            || self.api.starts_with("azure-openai");
        let (short, long) = match self.cache() {
            Cache::Anthropic => (5 * MINUTE_MS, 60 * MINUTE_MS),
            _ if openai => (10 * MINUTE_MS, 24 * 60 * MINUTE_MS),
            _ => (5 * MINUTE_MS, 60 * MINUTE_MS),
        };
        (if self.long_retention { long } else { short }).max(self.prompt_cache_ms)
    }

    /// The idle time when the main model's cache has lapsed since its last
    /// request: longer than [`MainModel::ttl_ms`], and longer than Pi's idle
    /// warming could keep it (`cacheWarming: "idle"`, the default of Pi 1.6,
    /// for a model that declares a lifetime: up to 30 minutes, then the TTL).
    /// Pi decides each refresh on its own estimate of its worth, which the
    /// guard does not repeat, so with warming on it waits the whole 30
    /// minutes: a missed free edit, never a paid one.
    pub fn lapsed(&self) -> Option<usize> {
        let idle = self.idle_ms?;
        let warmed = self.cache_warming == "idle" && self.prompt_cache_ms > 0;
        let alive = self.ttl_ms().saturating_add(if warmed { WARMING_IDLE_MS } else { 0 });
        (idle > alive).then_some(idle)
    }

    pub fn cache(&self) -> Cache {
        if self.provider == "openai-codex" || self.api == "openai-codex-responses" {
            Cache::OpenAiCodex
        } else if self.api == "anthropic-messages" {
            Cache::Anthropic
        } else {
            Cache::Prefix
        }
    }
}

/// How a provider's prompt cache reacts to an edit.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "CacheKind"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cache {
    /// OpenAI Codex: after any edit the next request reads nothing from the
    /// cache (the original guard measured 2,560 or 0 tokens read after every
    /// checkpoint, wherever the edit was).
    // Not serde's kebab-case (`open-ai-codex`): the name `as_str` and `parse` use.
    #[serde(rename = "openai-codex")]
    OpenAiCodex,
    /// Anthropic: the next request reads up to its latest breakpoint before
    /// the first edit that is still cached: a read point or the question the
    /// pin marks; everything after it is written again.
    Anthropic,
    /// Any other provider: a prefix cache, rewritten from the first edited entry on.
    #[default]
    Prefix,
}

impl Cache {
    /// The checkpoint break-even's factor in tokens (docs/GUARD.md, "When an
    /// edit pays off"): 13 with the whole context for OpenAI Codex (the
    /// original guard's checkpoints paid back after about 8–10 later requests,
    /// so 13 leaves a margin); 16 otherwise (writing costs 12.5× reading on
    /// Anthropic; the same 16 as the run-end exchange rule).
    pub fn checkpoint_factor(self) -> usize {
        match self {
            Cache::OpenAiCodex => 13,
            Cache::Anthropic | Cache::Prefix => 16,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Cache::OpenAiCodex => "openai-codex",
            Cache::Anthropic => "anthropic",
            Cache::Prefix => "prefix",
        }
    }

    pub fn parse(s: &str) -> Option<Cache> {
        match s {
            "openai-codex" => Some(Cache::OpenAiCodex),
            "anthropic" => Some(Cache::Anthropic),
            "prefix" => Some(Cache::Prefix),
            _ => None,
        }
    }
}

/// Where a rewrite starts.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "RewriteBasis"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The whole context (Codex; Anthropic without the pin or with no
    /// breakpoint before the edit).
    #[default]
    Whole,
    /// After the latest read point before the edit (Anthropic).
    ReadPoint,
    /// After the question the pin marks (Anthropic).
    Question,
    /// From the first edited entry on (a prefix cache).
    FirstEdit,
}

impl Basis {
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Whole => "whole",
            Basis::ReadPoint => "read-point",
            Basis::Question => "question",
            Basis::FirstEdit => "first-edit",
        }
    }

    pub fn parse(s: &str) -> Option<Basis> {
        match s {
            "whole" => Some(Basis::Whole),
            "read-point" => Some(Basis::ReadPoint),
            "question" => Some(Basis::Question),
            "first-edit" => Some(Basis::FirstEdit),
            _ => None,
        }
    }
}

/// A rewrite: characters written again and where they start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Measured {
    pub chars: usize,
    pub basis: Basis,
}

/// The rewrite measure of one context: characters the provider writes again
/// when the earliest edited entry is entry `i`. Built once per pass (suffix
/// sums and the breakpoints), then asked per item in constant or
/// logarithmic time.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rewrite {
    /// Context characters from each entry to the end (images by pixels).
    suffix: Vec<usize>,
    whole: usize,
    cache: Cache,
    /// Anthropic with the pin: the entries a breakpoint the next request
    /// reads sits on, ascending (a read point or the question).
    anchors: Vec<(usize, Basis)>,
}

/// Pi's `normalizeToolCallId` for Anthropic (pi-ai anthropic-messages.js):
/// `id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64)`. The regular expression
/// works on UTF-16 units, so a character outside the BMP becomes two `_`.
pub fn anthropic_tool_id(id: &str) -> String {
    let mut out = String::with_capacity(id.len().min(64));
    for c in id.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('_');
            }
        }
        if out.len() >= 64 {
            break;
        }
    }
    out.truncate(64);
    out
}

/// A message Pi sends as a user message with text (`convertToLlm`: user
/// messages, custom messages, `!` commands, summaries): where the pin may
/// put the question's breakpoint.
fn user_text(m: &Message) -> bool {
    let has_text = |c: &Content| match c {
        Content::Text(t) => !t.is_empty(),
        Content::Blocks(b) => b.iter().any(|b| matches!(b, Block::Text { text } if !text.is_empty())),
    };
    match m {
        Message::User { content } | Message::Custom { content, .. } => has_text(content),
        Message::BashExecution { exclude_from_context, .. } => !exclude_from_context,
        Message::CompactionSummary { .. } | Message::BranchSummary { .. } => true,
        _ => false,
    }
}

/// The one rewrite measure (see the module doc): the main model (provider,
/// pin, read points) and the projected entries in, a [`Rewrite`] to ask per
/// edited entry. Reads the entries once.
pub fn rewrite(model: &MainModel, entries: &[ContextEntry]) -> Rewrite {
    let sizes: Vec<usize> = entries.iter().map(entry_chars).collect();
    rewrite_sized(model, entries, &sizes)
}

/// An entry's context characters, as the measure sums them (images by pixels).
pub fn entry_chars(e: &ContextEntry) -> usize {
    e.messages.iter().map(crate::size::message_chars).sum()
}

/// [`rewrite`] with each entry's characters measured already (`sizes[i]`
/// of `entries[i]`, by [`entry_chars`]): the audit measures a session once
/// and asks at every run end of it, each a prefix of the entries.
pub fn rewrite_sized(model: &MainModel, entries: &[ContextEntry], sizes: &[usize]) -> Rewrite {
    let cache = model.cache();
    let mut suffix = vec![0usize; entries.len()];
    let mut sum = 0usize;
    for (i, &size) in sizes.iter().enumerate().take(entries.len()).rev() {
        sum = sum.saturating_add(size);
        if let Some(slot) = suffix.get_mut(i) {
            *slot = sum;
        }
    }
    let mut anchors = Vec::new();
    if cache == Cache::Anthropic && model.pin {
        // The question: the latest user message with text that is not the last message.
        let last = entries.iter().rposition(|e| !e.messages.is_empty());
        let question = entries.iter().rposition(|e| e.messages.iter().any(user_text)).filter(|&q| Some(q) != last);
        for (i, e) in entries.iter().enumerate() {
            // A few read points: a linear search (a sort would add its code to the wasm).
            let read_point = !model.read_points.is_empty()
                && e.messages.iter().any(|m| {
                    matches!(m, Message::ToolResult { tool_call_id, .. }
                        if model.read_points.contains(&anthropic_tool_id(tool_call_id)))
                });
            if read_point {
                anchors.push((i, Basis::ReadPoint));
            } else if Some(i) == question {
                anchors.push((i, Basis::Question));
            }
        }
    }
    Rewrite { suffix, whole: sum, cache, anchors }
}

impl Rewrite {
    /// Characters written again when entry `first_edited` is the earliest edit.
    pub fn from(&self, first_edited: usize) -> usize {
        self.measure(first_edited).chars
    }

    /// [`Rewrite::from`] with where the rewrite starts: Codex the whole
    /// context; Anthropic after the latest breakpoint before the edit (whole
    /// without one, or without the pin); others from the edited entry on.
    pub fn measure(&self, first_edited: usize) -> Measured {
        let whole = Measured { chars: self.whole, basis: Basis::Whole };
        match self.cache {
            Cache::OpenAiCodex => whole,
            Cache::Anthropic => {
                let before = self.anchors.partition_point(|(a, _)| *a < first_edited);
                match before.checked_sub(1).and_then(|k| self.anchors.get(k)) {
                    Some(&(at, basis)) => {
                        Measured { chars: self.suffix.get(at.saturating_add(1)).copied().unwrap_or(0), basis }
                    }
                    None => whole,
                }
            }
            Cache::Prefix => {
                Measured { chars: self.suffix.get(first_edited).copied().unwrap_or(0), basis: Basis::FirstEdit }
            }
        }
    }

    /// The whole context's characters.
    pub fn whole(&self) -> usize {
        self.whole
    }

    pub fn cache(&self) -> Cache {
        self.cache
    }
}

/// Which break-even weighed.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "BreakEvenRule"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// Run end: the unrelated old exchanges together (`exchangeBreakEven`).
    #[default]
    Exchanges,
    /// Run end: the old images from before the run's prompt together (the same gate).
    Images,
    /// A mid-run checkpoint's batch (`midRunBreakEven`).
    Checkpoint,
    /// Run end: the large and small outputs whose edits go (`pass::gate`).
    Outputs,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Exchanges => "exchanges",
            Rule::Images => "images",
            Rule::Checkpoint => "checkpoint",
            Rule::Outputs => "outputs",
        }
    }

    pub fn parse(s: &str) -> Option<Rule> {
        match s {
            "exchanges" => Some(Rule::Exchanges),
            "images" => Some(Rule::Images),
            "checkpoint" => Some(Rule::Checkpoint),
            "outputs" => Some(Rule::Outputs),
            _ => None,
        }
    }
}

/// What a pass's break-evens read besides the edit itself: the main model's
/// cache and prices, the requests (or turns) so far, those expected later,
/// and the share of the saved characters expected to go, in thousandths
/// (1000 at run end, where the judge has answered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outlook {
    pub cache: Cache,
    pub prices: Prices,
    pub requests: usize,
    pub later: usize,
    pub share_permille: usize,
    /// The cache is cold: the idle time after which it lapsed
    /// ([`MainModel::lapsed`]). The next request writes the whole context
    /// anyway, so an edit rewrites nothing: every rule weighs a rewrite of 0.
    pub lapsed: Option<usize>,
}

/// One break-even decision with its numbers (`worth::weigh`): in money,
/// `expected chars removed × read price × later requests ≥ rewrite × (write −
/// read price) + judge`, else in tokens `expected × later ≥ factor × rewrite`
/// (and `saved ≥ minSaving` where one applies); or the room trigger. Kept in
/// the record (`breakEven`, optional: records without it read as before) for
/// `/guard`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "BreakEvenDecision"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakEven {
    pub rule: Rule,
    /// Characters the edits keep out (a checkpoint: its pending characters).
    pub saved_chars: usize,
    /// Requests so far (run end) or turns so far of the run (checkpoint).
    pub requests: usize,
    /// In tokens, the factor; 0 in money.
    pub factor: usize,
    /// The rewrite weighed: at run end, beyond what the pass's other edits
    /// rewrite anyway (0: they ride along).
    pub rewrite_chars: usize,
    /// The minimum saving that applied (`exchangeMinSavingChars`), else 0.
    pub min_saving_chars: usize,
    pub cache: Cache,
    /// Where the weighed rewrite starts.
    pub basis: Basis,
    /// The characters expected to go (`saved × the share removed`).
    pub expected_chars: usize,
    /// The later requests expected (`laterRequests`' estimator).
    pub later: usize,
    /// In money: the expected saving and the cost, in millionths of a dollar.
    pub gain_micros: usize,
    pub cost_micros: usize,
    /// A checkpoint let through by the room trigger (`midRunRoomTokens`), the money rule not weighed.
    pub room: bool,
    /// Weighed on a cold cache: the idle time (ms) after which it lapsed; 0 warm.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lapsed_ms: usize,
    pub paid_off: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl BreakEven {
    /// The decision of an edit of `saved_chars` that rewrites `rewrite_chars`:
    /// [`worth::weigh`] over `outlook` (its cache and requests recorded too),
    /// plus the judge's cost, and the minimum saving.
    pub fn weigh(mut self, outlook: &Outlook, judge_micros: usize) -> BreakEven {
        if let Some(idle) = outlook.lapsed {
            // Everything is written again anyway: the edit adds nothing to it.
            (self.rewrite_chars, self.lapsed_ms) = (0, idle.max(1));
        }
        let edit = Edit {
            pending_chars: self.saved_chars,
            share_permille: outlook.share_permille,
            rewrite_chars: self.rewrite_chars,
            later: outlook.later,
            judge_micros,
        };
        let w = worth::weigh(edit, outlook.prices, self.factor);
        (self.cache, self.requests, self.later) = (outlook.cache, outlook.requests, outlook.later);
        (self.expected_chars, self.factor, self.gain_micros, self.cost_micros) =
            (w.expected_chars, w.factor, w.gain_micros, w.cost_micros);
        self.paid_off = self.rewrite_chars == 0 || (self.saved_chars >= self.min_saving_chars && w.paid_off);
        self
    }

    /// Whether the money rule weighed it (else tokens, or the room trigger).
    pub fn in_money(&self) -> bool {
        !self.room && self.factor == 0 && (self.gain_micros > 0 || self.cost_micros > 0)
    }

    /// Read back from a record: `None` unless it has a known rule; other
    /// missing or wrong-typed fields read as empty.
    pub fn from_value(v: Value) -> Option<BreakEven> {
        let mut f = Fields::of(v);
        Some(BreakEven {
            rule: Rule::parse(&f.string("rule"))?,
            saved_chars: f.count("savedChars"),
            requests: f.count("requests"),
            factor: f.count("factor"),
            rewrite_chars: f.count("rewriteChars"),
            min_saving_chars: f.count("minSavingChars"),
            cache: Cache::parse(&f.string("cache")).unwrap_or_default(),
            basis: Basis::parse(&f.string("basis")).unwrap_or_default(),
            expected_chars: f.count("expectedChars"),
            later: f.count("later"),
            gain_micros: f.count("gainMicros"),
            cost_micros: f.count("costMicros"),
            room: f.boolean("room"),
            lapsed_ms: f.count("lapsedMs"),
            paid_off: f.boolean("paidOff"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{call, entry, result, say, user};
    use serde_json::json;

    /// The question (10), its answer's call (`bash` + `{}`: 6), two results
    /// (100, 1,000) and the answer (4): 1,120 in all.
    fn entries() -> Vec<ContextEntry> {
        vec![
            entry("u", user("0123456789")),
            entry("a", call("c1", "bash", json!({}))),
            entry("r1", result("c1", "bash", &"a".repeat(100))),
            entry("r2", result("toolu|2😀", "bash", &"b".repeat(1000))),
            entry("end", say("done")),
        ]
    }

    fn model(provider: &str, api: &str) -> MainModel {
        MainModel { provider: provider.into(), api: api.into(), ..MainModel::default() }
    }

    fn anthropic(read_points: &[&str]) -> MainModel {
        MainModel {
            pin: true,
            read_points: read_points.iter().map(|p| p.to_string()).collect(),
            ..model("anthropic", "anthropic-messages")
        }
    }

    #[test]
    fn a_prefix_cache_rewrites_from_the_first_edit() {
        let r = rewrite(&model("faux", "faux"), &entries());
        assert_eq!((r.from(0), r.from(2), r.from(3), r.from(5)), (1120, 1104, 1004, 0));
        assert_eq!(r.measure(3).basis, Basis::FirstEdit);
        assert_eq!(r.cache().checkpoint_factor(), 16);
    }

    #[test]
    fn codex_rewrites_the_whole_context_wherever_the_edit_is() {
        for m in [model("openai-codex", "openai-codex-responses"), model("x", "openai-codex-responses")] {
            let r = rewrite(&m, &entries());
            assert_eq!(
                (r.from(0), r.from(3), r.measure(3).basis, r.cache().checkpoint_factor()),
                (1120, 1120, Basis::Whole, 13)
            );
        }
        assert_eq!(MainModel::from_value(json!({"provider": 3})).cache(), Cache::Prefix);
    }

    #[test]
    fn anthropic_rewrites_after_the_latest_breakpoint_before_the_edit() {
        // Only the question: an edit of r2 rewrites what follows `u`, 1,120 − 10 = 1,110.
        let r = rewrite(&anthropic(&[]), &entries());
        assert_eq!(r.measure(3), Measured { chars: 1110, basis: Basis::Question });
        // A read point on r1 (c1): after it, 1,004 (r2 and the answer).
        let r = rewrite(&anthropic(&["c1"]), &entries());
        assert_eq!(r.measure(3), Measured { chars: 1004, basis: Basis::ReadPoint });
        // r1 itself edited: its read point is gone, the question's holds.
        assert_eq!(r.measure(2), Measured { chars: 1110, basis: Basis::Question });
        // The edit before the question (or on it): nothing before it is cached, the whole context.
        assert_eq!(r.measure(0), Measured { chars: 1120, basis: Basis::Whole });
        // Pi's normalized id matches: `toolu|2😀` is sent as `toolu_2__`; an edit after r2 rewrites the answer.
        assert_eq!(anthropic_tool_id("toolu|2😀"), "toolu_2__");
        let r = rewrite(&anthropic(&["toolu_2__", "elsewhere"]), &entries());
        assert_eq!(r.measure(4), Measured { chars: 4, basis: Basis::ReadPoint });
        assert_eq!(r.measure(3), Measured { chars: 1110, basis: Basis::Question });
    }

    #[test]
    fn anthropic_without_the_pin_or_a_breakpoint_rewrites_the_whole_context() {
        let off = MainModel { pin: false, ..anthropic(&["c1"]) };
        let r = rewrite(&off, &entries());
        assert_eq!((r.measure(3), r.cache().checkpoint_factor()), (Measured { chars: 1120, basis: Basis::Whole }, 16));
        // The question as the last message is not pinned (the pin skips it): no breakpoint.
        let asked = vec![entry("r0", result("c0", "bash", &"x".repeat(50))), entry("u", user("now?"))];
        assert_eq!(rewrite(&anthropic(&[]), &asked).measure(1), Measured { chars: 54, basis: Basis::Whole });
        // Read from the extension's JSON: missing fields are off and empty, a wrong item is "".
        let m = MainModel::from_value(
            json!({"provider": "anthropic", "api": "anthropic-messages", "pin": true, "readPoints": ["c1", 7]}),
        );
        assert_eq!(m, anthropic(&["c1", ""]));
        assert_eq!(MainModel::from_value(json!({"api": "anthropic-messages"})), model("", "anthropic-messages"));
    }

    #[test]
    fn tool_ids_are_normalized_as_pi_does() {
        assert_eq!(anthropic_tool_id("call_AZ-az09"), "call_AZ-az09");
        assert_eq!(anthropic_tool_id("a.b:c/日"), "a_b_c__");
        assert_eq!(anthropic_tool_id(&"é".repeat(40)), "_".repeat(40));
        assert_eq!(anthropic_tool_id(&format!("{}😀x", "y".repeat(63))), format!("{}_", "y".repeat(63)));
    }

    #[test]
    fn the_cache_lapses_after_its_ttl_unless_pi_keeps_it_warm() {
        let min = |m: usize, sec: usize| m * 60_000 + sec * 1000;
        let at = |m: MainModel, idle: usize| MainModel { idle_ms: Some(idle), ..m }.lapsed();
        let sonnet = anthropic(&[]);
        // Anthropic: 5 minutes. 4:59 idle reads the cache, 5:01 finds it lapsed; exactly 5:00 is not past it.
        assert_eq!(at(sonnet.clone(), min(4, 59)), None);
        assert_eq!(at(sonnet.clone(), min(5, 0)), None);
        assert_eq!(at(sonnet.clone(), min(5, 1)), Some(301_000));
        assert_eq!(at(sonnet.clone(), min(10, 0)), Some(600_000));
        // Long retention (`ttl: "1h"`): 10 minutes is nothing; 61 minutes is.
        let long = MainModel { long_retention: true, ..sonnet.clone() };
        assert_eq!(
            (long.ttl_ms(), at(long.clone(), min(10, 0)), at(long.clone(), min(61, 0))),
            (3_600_000, None, Some(3_660_000))
        );
        // Pi's idle warming (the model declares a lifetime, as Pi's catalog does for Claude): 30 minutes more.
        let warmed = MainModel { cache_warming: "idle".into(), prompt_cache_ms: 300_000, ..sonnet.clone() };
        assert_eq!(
            (at(warmed.clone(), min(10, 0)), at(warmed.clone(), min(35, 0)), at(warmed.clone(), min(35, 1))),
            (None, None, Some(min(35, 1)))
        );
        // Warming only while a run streams, off, or a model with no declared lifetime (not eligible): no help.
        for m in [
            MainModel { cache_warming: "streaming".into(), ..warmed.clone() },
            MainModel { cache_warming: "off".into(), ..warmed.clone() },
            MainModel { prompt_cache_ms: 0, ..warmed.clone() },
        ] {
            assert_eq!(at(m, min(10, 0)), Some(600_000));
        }
        // OpenAI: the long end of "5 to 10 minutes", and 24 hours with long retention.
        let gpt = model("openai", "openai-responses");
        assert_eq!((at(gpt.clone(), min(9, 59)), at(gpt.clone(), min(10, 1))), (None, Some(min(10, 1))));
        assert_eq!(at(model("openai-codex", "openai-codex-responses"), min(10, 1)), Some(min(10, 1)));
        assert_eq!(MainModel { long_retention: true, ..gpt }.ttl_ms(), 86_400_000);
        // Others: 5 minutes; a longer declared lifetime wins.
        assert_eq!(at(model("faux", "faux"), min(5, 1)), Some(min(5, 1)));
        assert_eq!(at(MainModel { prompt_cache_ms: 900_000, ..model("faux", "faux") }, min(14, 0)), None);
        // Unknown idle (no timestamps, a clock gone backwards) is never lapsed.
        assert_eq!(sonnet.lapsed(), None);
        for v in [json!({"idleMs": -5}), json!({"idleMs": "600000"}), json!({"idleMs": 1.5}), json!({})] {
            assert_eq!(MainModel::from_value(v.clone()).lapsed(), None, "{v}");
        }
        let read = MainModel::from_value(json!({"api": "anthropic-messages", "idleMs": 600000, "longRetention": false,
            "cacheWarming": "idle", "promptCacheMs": 300000}));
        assert_eq!(
            (read.idle_ms, read.cache_warming.as_str(), read.prompt_cache_ms, read.lapsed()),
            (Some(600_000), "idle", 300_000, None)
        );
    }

    #[test]
    fn a_break_even_on_a_lapsed_cache_weighs_no_rewrite() {
        let sonnet = Prices { input: 3_000_000, cache_read: 300_000, cache_write: 3_750_000 };
        let b = BreakEven {
            rule: Rule::Checkpoint,
            saved_chars: 40_000,
            factor: 16,
            rewrite_chars: 124_800,
            ..BreakEven::default()
        };
        let warm = Outlook { later: 10, requests: 4, share_permille: 600, prices: sonnet, ..Outlook::default() };
        let w = b.weigh(&warm, 0);
        assert_eq!((w.gain_micros, w.cost_micros, w.paid_off, w.lapsed_ms), (18_000, 86_940, false, 0));
        let c = b.weigh(&Outlook { lapsed: Some(420_000), ..warm }, 5_000);
        // The judge's cost still counts; the rewrite does not.
        assert_eq!(
            (c.gain_micros, c.cost_micros, c.rewrite_chars, c.paid_off, c.lapsed_ms),
            (18_000, 5_000, 0, true, 420_000)
        );
        let v = serde_json::to_value(c).unwrap();
        assert_eq!(v["lapsedMs"], 420_000);
        assert_eq!(BreakEven::from_value(v).unwrap(), c);
        assert!(serde_json::to_value(w).unwrap().get("lapsedMs").is_none(), "a warm decision's record is as before");
    }

    #[test]
    fn a_break_even_weighs_and_reads_back() {
        let b = BreakEven { saved_chars: 9_100, factor: 16, rewrite_chars: 38_200, ..BreakEven::default() };
        let over = |later, prices| Outlook { later, requests: 4, share_permille: 1000, prices, ..Outlook::default() };
        // In tokens (no prices): 9,100 × 4 = 36,400 < 16 × 38,200 = 611,200; over 68 later requests, 618,800.
        let none = Prices::default();
        assert!(!b.weigh(&over(4, none), 0).paid_off);
        let w = b.weigh(&over(68, none), 0);
        assert_eq!(
            (w.paid_off, w.later, w.requests, w.expected_chars, w.factor, w.in_money()),
            (true, 68, 4, 9_100, 16, false)
        );
        assert!(BreakEven { rewrite_chars: 0, ..b }.weigh(&over(1, none), 0).paid_off, "nothing extra to rewrite");
        let small = BreakEven { min_saving_chars: 10_000, ..b };
        assert!(!small.weigh(&over(1000, none), 0).paid_off, "below the minimum");
        // In money the factor is 0 and the dollars are kept: (38,200 − 9,100) ÷ 4 × $3.45/M written again.
        let sonnet = Prices { input: 3_000_000, cache_read: 300_000, cache_write: 3_750_000 };
        let w = b.weigh(&over(68, sonnet), 0);
        assert_eq!((w.factor, w.gain_micros, w.cost_micros, w.in_money()), (0, 46_410, 25_098, true));
        // The judge's cost is added to the rewrite's.
        assert_eq!(b.weigh(&over(68, sonnet), 14_000).cost_micros, 39_098);
        let v = serde_json::to_value(BreakEven { cache: Cache::Anthropic, basis: Basis::ReadPoint, ..w }).unwrap();
        assert_eq!((v["gainMicros"].clone(), v["later"].clone()), (json!(46_410), json!(68)));
        assert_eq!(
            BreakEven::from_value(v.clone()).unwrap(),
            BreakEven { cache: Cache::Anthropic, basis: Basis::ReadPoint, ..w }
        );
        assert_eq!(v["cache"], "anthropic");
        assert_eq!(v["basis"], "read-point");
        assert_eq!(v["savedChars"], 9_100);
        assert_eq!(BreakEven::from_value(v).unwrap().basis, Basis::ReadPoint);
        assert_eq!(BreakEven::from_value(json!({"rule": "other"})), None);
    }

    /// The names serde writes (and the TypeScript types say) are the ones `parse` reads back.
    #[test]
    fn serde_names_read_back() {
        for c in [Cache::OpenAiCodex, Cache::Anthropic, Cache::Prefix] {
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
            let b = BreakEven { cache: c, ..BreakEven::default() };
            assert_eq!(BreakEven::from_value(serde_json::to_value(b).unwrap()), Some(b));
        }
        for b in [Basis::Whole, Basis::ReadPoint, Basis::Question, Basis::FirstEdit] {
            assert_eq!(serde_json::to_value(b).unwrap(), b.as_str());
        }
        for r in [Rule::Exchanges, Rule::Images, Rule::Checkpoint, Rule::Outputs] {
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
        }
    }
}
