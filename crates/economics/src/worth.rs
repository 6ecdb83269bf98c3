//! When an edit pays off (docs/GUARD.md, same heading; issue 20): the one
//! expected-value rule that every edit with a cache cost goes through (a
//! mid-run checkpoint's batch, and at run end the old exchanges and the old
//! images together).
//!
//! An edit pays off when what it is expected to save on the later requests is
//! at least what it costs now:
//!
//! ```text
//! expected tokens removed × carrying price × expected later requests
//!     ≥ tokens rewritten × (writing price − reading price) + the judge's cost
//! ```
//!
//! "Tokens rewritten" are those the next request writes again: the cache's
//! rewrite measure (from the first edited entry, or the read point before it)
//! less the tokens expected to go, which are not sent at all. Against guard
//! off, that request writes them at the writing price where it would have
//! read the whole measure at the reading price; the difference is the premium
//! on what is written, and the reading price of what went, which is the first
//! of the later requests' savings. (The original guard's rule in tokens,
//! below, keeps its own measure: its factors were set on it.)
//!
//! Prices are the main model's, from Pi's catalog (`model.cost`, dollars per
//! million tokens; the tier for the context's size where the catalog has
//! tiers): a token kept in the context is read from the cache on every later
//! request (`cacheRead`), a token the edit makes the provider write again is
//! paid at `cacheWrite` where the catalog has one (Anthropic), else at `input`
//! (prefix caches with no write premium, such as OpenAI's), instead of being
//! read. Where the catalog has no cache price (or a zero one) the same rule
//! runs in tokens with the original guard's factors (`Cache::checkpoint_factor`: 13, 16):
//! `expected removed × later ≥ factor × rewritten`.
//!
//! For: [`Prices`] (read from the catalog's entry), [`PRIOR_SHARE_PERMILLE`]
//! (the share expected to go before a pass of the session says otherwise:
//! `memo::removed_share`), [`later_requests`] (the estimators of the requests still to come), and
//! [`weigh`]. Not for: measuring the rewrite (`cache`) or choosing the batch
//! (`checkpoint`).
//!
//! Money is kept in millionths of a dollar (`micros`) and prices in millionths
//! of a dollar per million tokens, as integers, so the decisions compare
//! exactly and read back from a record as they were written.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The share of judged characters an edit is expected to remove before the
/// session has a pass of its own to learn from (issue 20: a documented prior).
/// The economy suite's oracle stand-in removed 0.8–0.95 of what it judged;
/// the original guard's measured runs kept 8–30% of large outputs. 0.6 is
/// below both, so a first checkpoint is not taken on a guess that flatters it.
pub const PRIOR_SHARE_PERMILLE: usize = 600;

/// How much the prior weighs against what the session's passes show: as
/// much as this many judged characters (about one large output), so that a
/// first small item neither makes nor ends the case.
pub const PRIOR_WEIGHT_CHARS: usize = 20_000;

/// The main model's prices, in millionths of a dollar per million tokens
/// (dollars per million × 10⁶), after the tier for the context's size.
/// Written as the catalog writes them (dollars per million), so they read
/// back through [`Prices::from_cost`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Prices {
    pub input: usize,
    pub cache_read: usize,
    pub cache_write: usize,
}

impl Serialize for Prices {
    fn serialize<S: serde::Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut m = out.serialize_struct("Prices", 3)?;
        m.serialize_field("input", &(self.input as f64 / 1e6))?;
        m.serialize_field("cacheRead", &(self.cache_read as f64 / 1e6))?;
        m.serialize_field("cacheWrite", &(self.cache_write as f64 / 1e6))?;
        m.end()
    }
}

/// Dollars per million tokens → millionths of a dollar per million tokens;
/// anything that is not a finite price ≥ 0 is 0 (no price).
fn micros(v: Option<f64>) -> usize {
    match v {
        Some(x) if x.is_finite() && x > 0.0 => (x * 1e6).round() as usize,
        _ => 0,
    }
}

impl Prices {
    /// Pi's `model.cost` (`input`, `cacheRead`, `cacheWrite`, optional `tiers`
    /// each with `inputTokensAbove`), with the tier `calculateCost` would use
    /// for a request of `context_tokens` input tokens: the highest threshold
    /// below it. Missing or broken fields read as 0.
    pub fn from_cost(cost: &Value, context_tokens: usize) -> Prices {
        let mut rates = cost;
        let mut matched = -1.0f64;
        for tier in cost.get("tiers").and_then(Value::as_array).into_iter().flatten() {
            let above = tier.get("inputTokensAbove").and_then(Value::as_f64).unwrap_or(f64::INFINITY);
            if (context_tokens as f64) > above && above > matched {
                rates = tier;
                matched = above;
            }
        }
        let get = |k: &str| micros(rates.get(k).and_then(Value::as_f64));
        Prices { input: get("input"), cache_read: get("cacheRead"), cache_write: get("cacheWrite") }
    }

    /// Whether the rule can run in money: an input and a cache-read price.
    pub fn priced(&self) -> bool {
        self.input > 0 && self.cache_read > 0
    }

    /// What a token written again costs: `cacheWrite` where the catalog has one, else `input`.
    pub fn write(&self) -> usize {
        if self.cache_write > 0 {
            self.cache_write
        } else {
            self.input
        }
    }

    /// What a rewrite costs over a read, in micros: the rule of `bill::premium`
    /// (the write's price less the read's, never below zero) on the catalog's prices.
    pub fn premium(&self) -> usize {
        self.write().saturating_sub(self.cache_read)
    }
}

/// Millionths of a dollar for `chars` characters (tokens ≈ characters ÷ 4)
/// at `price` (millionths of a dollar per million tokens), `times` over.
pub fn cost_micros(chars: usize, price: usize, times: usize) -> usize {
    let v = (chars as u128).saturating_mul(price as u128).saturating_mul(times as u128) / 4 / 1_000_000;
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// Millionths of a dollar for `chars` characters (tokens ≈ characters ÷ 4)
/// at `per_million` dollars per million tokens, as the catalog gives a
/// price (the judge's); 0 for a price that is not a finite number > 0.
pub fn micros_of(chars: usize, per_million: f64) -> usize {
    if per_million.is_finite() && per_million > 0.0 {
        (chars as f64 / 4.0 * per_million).round() as usize
    } else {
        0
    }
}

/// How the requests still to come are estimated.
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export, rename = "LaterRequests"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Estimator {
    /// The original guard's: as many turns as the run has had so far.
    Turns,
    /// As many requests as the session has had so far: an edit stays out for
    /// the rest of the session, not only the run.
    Session,
    /// The median of what remained of earlier runs that were at least as long
    /// as this one is now (their lengths in requests); without such a run,
    /// the turns so far.
    #[default]
    Median,
}

impl Estimator {
    pub fn as_str(self) -> &'static str {
        match self {
            Estimator::Turns => "turns",
            Estimator::Session => "session",
            Estimator::Median => "median",
        }
    }

    pub fn parse(s: &str) -> Option<Estimator> {
        [Estimator::Turns, Estimator::Session, Estimator::Median].into_iter().find(|e| e.as_str() == s)
    }
}

/// The requests expected after this one: `turns` of the run so far,
/// `session` requests of the session so far, and the lengths (requests) of
/// earlier runs. At least 1.
pub fn later_requests(estimator: Estimator, turns: usize, session: usize, earlier_runs: &[usize]) -> usize {
    let n = match estimator {
        Estimator::Turns => turns,
        Estimator::Session => session,
        Estimator::Median => {
            let mut rest: Vec<usize> = Vec::new();
            for &len in earlier_runs {
                if len > turns {
                    rest.push(len - turns);
                }
            }
            if rest.is_empty() {
                turns
            } else {
                crate::order::sort_by(&mut rest, |a, b| a.cmp(b));
                // The lower median: an even count takes the smaller middle value.
                rest[(rest.len() - 1) / 2]
            }
        }
    };
    n.max(1)
}

/// The requests expected after a run end: the session's so far, whatever the
/// estimator (the original guard's run-end rule). An edit at run end stays out for every
/// later run of the session, not only the next, so the next run's length
/// (what `median` would give) is too short a horizon; the session so far is
/// the same guess as "as many turns again" one level up.
pub fn later_after_run(session: usize) -> usize {
    session.max(1)
}

/// One edit (or batch of edits) to weigh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Edit {
    /// Characters the edit could keep out (a batch: its pending characters).
    pub pending_chars: usize,
    /// The share of them expected to go, in thousandths (1000 when known, as
    /// for images or answers already given).
    pub share_permille: usize,
    /// Characters the provider writes again because of it.
    pub rewrite_chars: usize,
    /// Requests expected after it.
    pub later: usize,
    /// The judge's cost for it, in millionths of a dollar (0 when none or unknown).
    pub judge_micros: usize,
}

/// What [`weigh`] found: the figures on each side and the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Worth {
    /// Characters expected to go (`pending × share`).
    pub expected_chars: usize,
    /// In money (prices known): the expected saving and the cost, in
    /// millionths of a dollar. Both 0 in tokens.
    pub gain_micros: usize,
    pub cost_micros: usize,
    /// In tokens (no prices): the factor used; 0 in money.
    pub factor: usize,
    pub paid_off: bool,
}

/// The rule itself (see the module's doc). An edit that rewrites nothing pays
/// off at once; `factor` is used only without prices.
pub fn weigh(edit: Edit, prices: Prices, factor: usize) -> Worth {
    let expected = (edit.pending_chars as u128 * edit.share_permille.min(1000) as u128 / 1000) as usize;
    let mut w = Worth { expected_chars: expected, ..Worth::default() };
    if prices.priced() {
        w.gain_micros = cost_micros(expected, prices.cache_read, edit.later);
        let premium = prices.premium();
        // What the next request writes again is the rewrite after the edit: the part expected to go is not sent.
        let written = edit.rewrite_chars.saturating_sub(expected);
        w.cost_micros = cost_micros(written, premium, 1).saturating_add(edit.judge_micros);
        w.paid_off = edit.rewrite_chars == 0 || w.gain_micros >= w.cost_micros;
    } else {
        w.factor = factor;
        w.paid_off =
            edit.rewrite_chars == 0 || expected.saturating_mul(edit.later) >= edit.rewrite_chars.saturating_mul(factor);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Claude Sonnet 4.5 in Pi's catalog: $3 input, $0.30 cache read, $3.75 cache write per million.
    fn sonnet() -> Prices {
        Prices::from_cost(&json!({"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}), 50_000)
    }

    #[test]
    fn prices_come_from_the_catalog_and_its_tier() {
        assert_eq!(sonnet(), Prices { input: 3_000_000, cache_read: 300_000, cache_write: 3_750_000 });
        // Written as the catalog writes them, read back the same.
        assert_eq!(Prices::from_cost(&serde_json::to_value(sonnet()).unwrap(), 0), sonnet());
        let tiered = json!({"input": 3, "cacheRead": 0.3, "cacheWrite": 3.75,
            "tiers": [{"inputTokensAbove": 200000, "input": 6, "cacheRead": 0.6, "cacheWrite": 7.5},
                      {"inputTokensAbove": 100000, "input": 4, "cacheRead": 0.4, "cacheWrite": 5}]});
        assert_eq!(Prices::from_cost(&tiered, 200_000).input, 4_000_000, "above 100k, not above 200k");
        assert_eq!(Prices::from_cost(&tiered, 200_001).cache_write, 7_500_000);
        assert_eq!(Prices::from_cost(&tiered, 90_000).input, 3_000_000);
        // OpenAI's automatic cache: no write price, so writing again costs input.
        let openai = Prices::from_cost(&json!({"input": 1.25, "cacheRead": 0.125, "cacheWrite": 0}), 0);
        assert_eq!((openai.priced(), openai.write()), (true, 1_250_000));
        // Broken or missing prices: not priced, the rule runs in tokens.
        for cost in
            [json!({}), json!({"input": "3", "cacheRead": null}), json!({"input": 3, "cacheRead": -1}), json!(7)]
        {
            assert!(!Prices::from_cost(&cost, 0).priced(), "{cost}");
        }
    }

    #[test]
    fn a_checkpoint_in_money_on_anthropic() {
        // 40,000 characters pending (10k tokens), 60% expected to go: 6k tokens × $0.30/M × 10 later
        // requests = $0.018. The measure is 31.2k tokens; the 6k that go are not sent, so 25.2k are
        // written again: 25,200 × ($3.75 − $0.30)/M = $0.08694.
        let edit =
            Edit { pending_chars: 40_000, share_permille: 600, rewrite_chars: 124_800, later: 10, judge_micros: 0 };
        let w = weigh(edit, sonnet(), 16);
        assert_eq!(
            (w.expected_chars, w.gain_micros, w.cost_micros, w.factor, w.paid_off),
            (24_000, 18_000, 86_940, 0, false)
        );
        // $0.0018 a later request: 49 pay ($0.0882), 48 do not ($0.0864).
        assert!(weigh(Edit { later: 49, ..edit }, sonnet(), 16).paid_off);
        assert!(!weigh(Edit { later: 48, ..edit }, sonnet(), 16).paid_off);
        // The judge's cost is added to the rewrite's.
        let w = weigh(Edit { later: 60, judge_micros: 21_100, ..edit }, sonnet(), 16);
        assert_eq!((w.gain_micros, w.cost_micros, w.paid_off), (108_000, 108_040, false));
        // Nothing rewritten (the edits ride along with others): pays off at once.
        assert!(weigh(Edit { rewrite_chars: 0, later: 1, ..edit }, sonnet(), 16).paid_off);
    }

    #[test]
    fn a_prefix_cache_without_a_write_premium_pays_back_sooner() {
        // OpenAI: $1.25 input, $0.125 read. The same edit: gain 6k × $0.125/M × 10 = $0.0075;
        // cost 25.2k × ($1.25 − $0.125)/M = $0.02835: 9 reads' worth per token rewritten, not 11.5.
        let openai = Prices { input: 1_250_000, cache_read: 125_000, cache_write: 0 };
        let edit =
            Edit { pending_chars: 40_000, share_permille: 600, rewrite_chars: 124_800, later: 10, judge_micros: 0 };
        let w = weigh(edit, openai, 13);
        assert_eq!((w.gain_micros, w.cost_micros), (7_500, 28_350));
        assert!(weigh(Edit { later: 38, ..edit }, openai, 13).paid_off);
        assert!(!weigh(Edit { later: 37, ..edit }, openai, 13).paid_off);
    }

    #[test]
    fn without_prices_the_rule_runs_in_tokens_with_the_seeds_factor() {
        let edit =
            Edit { pending_chars: 40_000, share_permille: 1000, rewrite_chars: 10_000, later: 4, judge_micros: 99 };
        // 40,000 × 4 = 160,000 ≥ 16 × 10,000.
        let w = weigh(edit, Prices::default(), 16);
        assert_eq!((w.factor, w.gain_micros, w.cost_micros, w.paid_off), (16, 0, 0, true));
        assert!(!weigh(Edit { later: 3, ..edit }, Prices::default(), 16).paid_off);
        assert!(weigh(Edit { later: 4, ..edit }, Prices { input: 3_000_000, ..Prices::default() }, 16).paid_off);
    }

    #[test]
    fn the_estimators_of_later_requests() {
        let earlier = [8, 33, 16, 48];
        assert_eq!(later_requests(Estimator::Turns, 10, 40, &earlier), 10);
        assert_eq!(later_requests(Estimator::Session, 10, 40, &earlier), 40);
        // Runs longer than 10: 23, 6 and 38 requests remained; the median is 23.
        assert_eq!(later_requests(Estimator::Median, 10, 40, &earlier), 23);
        // Runs longer than 16: 17 and 32 remained; the lower median is 17.
        assert_eq!(later_requests(Estimator::Median, 16, 40, &earlier), 17);
        // No earlier run this long: the turns so far.
        assert_eq!(later_requests(Estimator::Median, 50, 90, &earlier), 50);
        assert_eq!(later_requests(Estimator::Median, 0, 0, &[]), 1, "at least one");
        // After a run: the session's requests so far.
        assert_eq!((later_after_run(40), later_after_run(0)), (40, 1));
        assert_eq!(Estimator::parse("session"), Some(Estimator::Session));
        assert_eq!(Estimator::parse("mean"), None);
    }

    #[test]
    fn money_never_overflows() {
        let w = weigh(
            Edit {
                pending_chars: usize::MAX,
                share_permille: 5000,
                rewrite_chars: usize::MAX,
                later: usize::MAX,
                judge_micros: usize::MAX,
            },
            Prices { input: usize::MAX, cache_read: usize::MAX, cache_write: 0 },
            16,
        );
        assert_eq!(w.cost_micros, usize::MAX);
    }
}
