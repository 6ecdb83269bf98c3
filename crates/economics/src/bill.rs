//! The guard's net effect on the main model's bill so far (issue 20 part 5):
//! what its edits saved on the requests after them, less what they cost in
//! cache rewrites and in the judge, estimated from Pi's recorded usage and
//! the guard's records on the branch.
//!
//! For: that one computation and its line, which `/guard`, `/context` (and
//! its export) and the audit all show. Not for: deciding whether to edit
//! (`worth`), nor reading Pi (the extension hands over the branch as
//! [`Event`]s: each reply's recorded usage, each record, each recall's
//! characters, each compaction).
//!
//! How each part is estimated (docs/GUARD.md "What it saved so far"):
//!
//! - **reads saved**: for every request after an edit, the characters the
//!   records keep out then (less what `recall` brought back, nothing from
//!   before the last compaction) in tokens, priced at the cache-read price:
//!   left in, they would have been read from the cache. On a request that
//!   read nothing from the cache after one that did (a pause let it lapse),
//!   at the write price: guard off would have written them again;
//! - **tokens per character**: the session's own, from how much its recorded
//!   prompts grew over the characters its context grew by (the system prompt
//!   and the tools drop out), else characters ÷ 4 (`tokens_per_char`);
//! - **rewrites paid**: at each edit, from the usage of the first request after
//!   it, the tokens that request did not read although the request before sent
//!   them and the edit did not take them out: `prompt before − removed − read
//!   after` (the same as its cache write and uncached input less the context's
//!   growth since the request before), priced at write − read; none when that
//!   request read nothing from a lapsed cache. The usage is
//!   what the provider billed, wherever its cache put the read point (the pin,
//!   a provider without a write premium); the records' own rewrite measure
//!   exists only for the break-even gates, not for every run-end distill;
//! - **judge paid**: the records' `costUsd`.
//!
//! Prices are dollars per token from the session's recorded usage (cost ÷
//! tokens of each kind), else the catalog's `model.cost`; a token written again
//! costs the cache-write price where the usage (or catalog) has one, else the
//! uncached input price. Without a read or a write price the line says tokens
//! only.

use serde_json::Value;

use crate::decimal::fixed;
use crate::kept::Bill;
use crate::read::Fields;
use crate::text::short_count;

/// One branch entry the bill reads, in branch order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A reply of the main model with its recorded usage (tokens and dollars).
    Request(Usage),
    /// A `context-guard` record: the characters its results keep out (before − after of every
    /// result not kept) and the classifier's cost.
    Record {
        kept_chars: f64,
        cost_usd: f64,
        /// Its edits were in the request before the record, a prompt's first: an opening pass's, or a
        /// background judge's answers that landed there (`late.inRequest`).
        opening: bool,
        /// Weighed on a lapsed cache (its decisions have `lapsedMs`): that request wrote everything anyway.
        lapsed: bool,
    },
    /// A `recall` result: characters brought back into the context.
    Recall {
        chars: f64,
    },
    /// A message on the branch and its characters (text, tool-call arguments): with the recorded
    /// prompts they give the session's tokens per character.
    Message {
        chars: f64,
    },
    Compaction,
}

/// Pi's `usage` of one reply: tokens and, where recorded, dollars by kind.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    pub input: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub cost_input: f64,
    pub cost_read: f64,
    pub cost_write: f64,
}

impl Usage {
    /// Tokens the request sent: read, written and uncached.
    fn prompt(&self) -> f64 {
        self.input + self.cache_read + self.cache_write
    }
}

/// The catalog's prices of the main model, dollars per million tokens (`model.cost`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Catalog {
    pub input: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

/// What [`bill`] reads.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BillInput {
    pub events: Vec<Event>,
    pub catalog: Option<Catalog>,
}

/// A number that is finite and not negative, else 0 (a missing or broken usage counts nothing).
fn amount(v: Option<f64>) -> f64 {
    v.filter(|x| x.is_finite() && *x > 0.0).unwrap_or(0.0)
}

impl Usage {
    fn from_value(v: Value) -> Usage {
        let mut f = Fields::of(v);
        let cost = Fields::of(f.take("cost"));
        Usage {
            input: amount(f.number("input")),
            cache_read: amount(f.number("cacheRead")),
            cache_write: amount(f.number("cacheWrite")),
            cost_input: amount(cost.number("input")),
            cost_read: amount(cost.number("cacheRead")),
            cost_write: amount(cost.number("cacheWrite")),
        }
    }
}

/// The characters a record's results keep out: `beforeChars − afterChars` of each result not kept.
fn kept_chars(results: &Value) -> f64 {
    let mut chars = 0.0;
    for r in results.as_array().into_iter().flatten() {
        if r.get("outcome").and_then(Value::as_str) == Some("kept") {
            continue;
        }
        let size = |k: &str| amount(r.get(k).and_then(Value::as_f64));
        chars += (size("beforeChars") - size("afterChars")).max(0.0);
    }
    chars
}

impl Event {
    /// `{ type: "request", usage }`, `{ type: "record", data }`, `{ type: "recall", chars }`,
    /// `{ type: "compaction" }`; anything else is `None`.
    fn from_value(v: Value) -> Option<Event> {
        let mut f = Fields::of(v);
        match f.string("type").as_str() {
            "request" => Some(Event::Request(Usage::from_value(f.take("usage")))),
            "record" => {
                let data = f.take("data");
                let lapsed = |b: &Value| b.get("lapsedMs").and_then(Value::as_f64).is_some_and(|ms| ms > 0.0);
                let lapsed = data.get("breakEven").and_then(Value::as_array).is_some_and(|d| d.iter().any(lapsed));
                Some(Event::Record {
                    kept_chars: kept_chars(data.get("results").unwrap_or(&Value::Null)),
                    cost_usd: amount(data.get("costUsd").and_then(Value::as_f64)),
                    opening: lapsed || data.pointer("/late/inRequest").and_then(Value::as_bool).unwrap_or(false),
                    lapsed,
                })
            }
            "recall" => Some(Event::Recall { chars: amount(f.number("chars")) }),
            "message" => Some(Event::Message { chars: amount(f.number("chars")) }),
            "compaction" => Some(Event::Compaction),
            _ => None,
        }
    }
}

impl BillInput {
    pub fn from_value(v: Value) -> BillInput {
        let mut f = Fields::of(v);
        let events = f.list("events", Event::from_value).into_iter().flatten().collect();
        let catalog = match f.take("catalog") {
            Value::Object(map) => {
                let c = Fields::of(Value::Object(map));
                Some(Catalog {
                    input: amount(c.number("input")),
                    cache_read: amount(c.number("cacheRead")),
                    cache_write: amount(c.number("cacheWrite")),
                })
            }
            _ => None,
        };
        BillInput { events, catalog }
    }
}

/// Dollars per token, from what a session's requests recorded.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UsagePrices {
    /// A token read from the cache.
    pub read: Option<f64>,
    /// A token written to the cache again: the cache write's price, or where
    /// the provider records no write (a prefix cache such as OpenAI's bills a
    /// rewrite as plain input), the uncached input's.
    pub write: Option<f64>,
}

/// The one rule for prices from recorded usage (the bill's, and the audit's
/// through the wasm's `usagePrices`): each price is its dollars over its
/// tokens, where both were recorded.
pub fn usage_prices(sum: &Usage) -> UsagePrices {
    UsagePrices {
        read: per_token(sum.cost_read, sum.cache_read),
        write: per_token(sum.cost_write, sum.cache_write).or_else(|| per_token(sum.cost_input, sum.input)),
    }
}

/// What a token written again costs over reading it from the cache (never
/// below zero): the price of a rewrite.
pub fn premium(read: f64, write: f64) -> f64 {
    (write - read).max(0.0)
}

/// Dollars per token of `dollars` over `tokens`, when both are positive.
fn per_token(dollars: f64, tokens: f64) -> Option<f64> {
    (dollars > 0.0 && tokens > 0.0).then(|| dollars / tokens)
}

/// Dollars per token from a catalog price per million, when positive.
fn per_million(price: f64) -> Option<f64> {
    (price > 0.0).then(|| price / 1e6)
}

/// Tokens per character when the session cannot say (Pi's `estimateTokens`: characters ÷ 4).
const TOKENS_PER_CHAR: f64 = 0.25;

/// The session's tokens per character of its context, from its recorded
/// prompts: each prompt is fitted (least squares) as a fixed part (the system
/// prompt and the tools), a part per message (roles, ids, the wire's
/// wrapping) and a part per character; the last is the figure. Only the
/// requests after the last compaction count. Characters ÷ 4 with fewer than
/// 4 such requests, when the fit cannot tell the two parts apart, or when the
/// figure is out of 0.15–0.4 (images, whose tokens have no characters, say).
fn tokens_per_char(events: &[Event]) -> f64 {
    let (mut chars, mut messages) = (0.0_f64, 0.0_f64);
    let mut points: Vec<(f64, f64, f64)> = Vec::new();
    for event in events {
        match *event {
            // A recall's result is a message too: counted there.
            Event::Message { chars: c } => (chars, messages) = (chars + c, messages + 1.0),
            Event::Recall { .. } => {}
            Event::Record { kept_chars, opening, .. } => {
                chars -= kept_chars;
                // An opening pass's edits were already in the request before its record.
                if let Some(last) = points.last_mut().filter(|_| opening) {
                    last.0 -= kept_chars;
                }
            }
            Event::Compaction => (chars, messages, points) = (0.0, 0.0, Vec::new()),
            Event::Request(u) if u.prompt() > 0.0 => points.push((chars, messages, u.prompt())),
            Event::Request(_) => {}
        }
    }
    per_char_fit(&points).filter(|r| (0.15..=0.4).contains(r)).unwrap_or(TOKENS_PER_CHAR)
}

/// The per-character coefficient of `prompt = a + b·chars + c·messages` over
/// the points, by the normal equations (centred, so `a` drops out); `None`
/// when there are too few points or the two columns move together.
fn per_char_fit(points: &[(f64, f64, f64)]) -> Option<f64> {
    if points.len() < 4 {
        return None;
    }
    let n = points.len() as f64;
    let mean = |f: fn(&(f64, f64, f64)) -> f64| points.iter().map(f).sum::<f64>() / n;
    let (mx, mm, mp) = (mean(|p| p.0), mean(|p| p.1), mean(|p| p.2));
    let (mut sxx, mut smm, mut sxm, mut sxp, mut smp) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(x, m, p) in points {
        let (x, m, p) = (x - mx, m - mm, p - mp);
        (sxx, smm, sxm, sxp, smp) = (sxx + x * x, smm + m * m, sxm + x * m, sxp + x * p, smp + m * p);
    }
    let det = sxx * smm - sxm * sxm;
    // The columns must not be (nearly) proportional: the fit would be noise. (NaN fails it too.)
    let apart = det > 1e-6 * sxx * smm;
    apart.then(|| (sxp * smm - smp * sxm) / det).filter(|b| b.is_finite())
}

/// The bill of the branch's events.
pub fn bill(input: &BillInput) -> Bill {
    let per_char = tokens_per_char(&input.events);
    // Characters the records keep out now; edits waiting for their first request (the
    // characters they removed); the prompt of the last request with usage.
    let mut kept = 0.0_f64;
    let mut pending: Option<f64> = None;
    let mut before: Option<f64> = None;
    // The prompt of the request before the last, and what the last read from the cache: a record that
    // comes after the request its edits were in is weighed on them.
    let (mut earlier, mut last_read): (Option<f64>, f64) = (None, 0.0);
    // Tokens kept out of requests that read from the cache (priced at the read price) and of
    // requests that read nothing from it (the cache had lapsed: guard off would have written them).
    let (mut edits, mut saved, mut saved_cold, mut rewrite, mut judge) = (0, 0.0, 0.0, 0.0, 0.0);
    let mut sum = Usage::default();
    for event in &input.events {
        match *event {
            Event::Message { .. } => {}
            Event::Record { kept_chars, cost_usd, opening, lapsed } => {
                judge += cost_usd;
                if kept_chars > 0.0 {
                    edits += 1;
                    kept += kept_chars;
                    if opening && before.is_some() && (lapsed || last_read <= 0.0) {
                        // Its edits were in the request before it, which read nothing from the lapsed cache.
                        saved_cold += kept_chars * per_char;
                        before = before.map(|b| b - kept_chars * per_char);
                    } else if opening && before.is_some() {
                        // A judge's answers that landed in a prompt's first request on a warm cache: that
                        // request kept them out, read up to the first edit and wrote the rest again.
                        saved += kept_chars * per_char;
                        if let Some(earlier) = earlier {
                            rewrite += (earlier - kept_chars * per_char - last_read).max(0.0);
                        }
                    } else {
                        *pending.get_or_insert(0.0) += kept_chars;
                    }
                }
            }
            Event::Recall { chars } => kept = (kept - chars).max(0.0),
            Event::Compaction => {
                // What stood before it is in its summary now; the rewrite after it is the compaction's.
                kept = 0.0;
                pending = None;
                (before, earlier) = (None, None);
            }
            Event::Request(u) => {
                let prompt = u.prompt();
                // An aborted or failed reply with no usage sent nothing that was billed.
                if prompt <= 0.0 {
                    continue;
                }
                sum.input += u.input;
                sum.cache_read += u.cache_read;
                sum.cache_write += u.cache_write;
                sum.cost_input += u.cost_input;
                sum.cost_read += u.cost_read;
                sum.cost_write += u.cost_write;
                // A request after another that read nothing from the cache: it had lapsed (a pause), and
                // guard off would have written everything again too. What the edits keep out was then not
                // written, and they caused no rewrite.
                let cold = before.is_some() && u.cache_read <= 0.0;
                if cold {
                    saved_cold += kept * per_char;
                    pending = None;
                } else {
                    saved += kept * per_char;
                }
                if let (Some(removed), Some(before)) = (pending.take(), before) {
                    rewrite += (before - removed * per_char - u.cache_read).max(0.0);
                }
                (earlier, last_read) = (before, u.cache_read);
                before = Some(prompt);
            }
        }
    }
    let catalog = input.catalog.unwrap_or_default();
    let UsagePrices { read: read_usage, write: write_usage } = usage_prices(&sum);
    let read = read_usage.or_else(|| per_million(catalog.cache_read));
    let write = write_usage.or_else(|| per_million(catalog.cache_write).or_else(|| per_million(catalog.input)));
    let prices = match (read_usage.is_some() && write_usage.is_some(), read_usage.is_some() || write_usage.is_some()) {
        _ if read.is_none() || write.is_none() => "none",
        (true, _) => "usage",
        (false, true) => "usage and catalog",
        (false, false) => "catalog",
    };
    let (saved_usd, rewrite_usd) = match (read, write) {
        (Some(r), Some(w)) if prices != "none" => (Some(saved * r + saved_cold * w), Some(rewrite * premium(r, w))),
        _ => (None, None),
    };
    let mut b = Bill {
        edits,
        saved_tokens: saved + saved_cold,
        tokens_per_char: per_char,
        rewrite_tokens: rewrite,
        saved_usd,
        rewrite_usd,
        judge_usd: judge,
        net_usd: saved_usd.zip(rewrite_usd).map(|(s, w)| s - w - judge),
        read_price: saved_usd.and(read).map(|r| r * 1e6),
        write_price: saved_usd.and(write).map(|w| w * 1e6),
        prices: prices.to_string(),
        line: String::new(),
        answer: String::new(),
        short: String::new(),
    };
    b.line = line(&b, saved_cold > 0.0);
    if let Some(net) = b.net_usd.filter(|n| n.is_finite() && b.edits > 0) {
        b.short = short_answer(net);
        b.answer = answer(net, "this session's bill");
    }
    b
}

/// The status bar's money answer: `saved $0.27`, `cost $0.01`, `saved <$0.01`
/// (in cents, `<$0.01` below one).
pub fn short_answer(net_usd: f64) -> String {
    let amount = if net_usd.abs() < 0.01 { "<$0.01".to_string() } else { format!("${}", fixed(net_usd.abs(), 2)) };
    format!("{} {amount}", if net_usd < 0.0 { "cost" } else { "saved" })
}

/// The one money answer (issue 28): `saved $0.27 on <whose> so far (est.)` or
/// `cost $0.01 more on <whose> so far (est.)`; `whose` is "this session's
/// bill" for one session, "the bills of 3 sessions" for the audit's total.
pub fn answer(net_usd: f64, whose: &str) -> String {
    let more = if net_usd < 0.0 { " more" } else { "" };
    format!("{}{more} on {whose} so far (est.)", short_answer(net_usd))
}

fn usd(x: f64) -> String {
    format!("${}", fixed(x, 4))
}

fn tokens(x: f64) -> String {
    short_count(x.round() as usize)
}

/// The figure in words, labelled as the estimate it is and how it is made:
/// `saved ~$0.4120 (est. from Pi's recorded usage and the guard's records: reads saved $0.5200 for 1.7M
/// tokens not sent, at the cache-read price − rewrites $0.1080 for 28.8k tokens written again, at write
/// − read − judge $0.0000; 4 edits, prices $0.30/M read and $3.75/M write from usage)`.
fn line(b: &Bill, cold: bool) -> String {
    let edits = format!("{} edit{}", b.edits, if b.edits == 1 { "" } else { "s" });
    if b.edits == 0 && b.judge_usd == 0.0 {
        return "$0 (no edit by the guard on this branch yet)".to_string();
    }
    match (b.net_usd, b.saved_usd, b.rewrite_usd, b.read_price, b.write_price) {
        (Some(net), Some(saved), Some(rewrite), Some(read), Some(write)) => format!(
            "{} ~{} (est. from Pi's recorded usage and the guard's records: reads saved {} for {} tokens not sent, \
             at the cache-read price{} − rewrites {} for {} tokens written again, at write − read − judge {}; {edits}, \
             prices ${}/M read and ${}/M write from {})",
            if net < 0.0 { "lost" } else { "saved" },
            usd(net.abs()),
            usd(saved),
            tokens(b.saved_tokens),
            if cold { " (the write price after a pause that let the cache lapse)" } else { "" },
            usd(rewrite),
            tokens(b.rewrite_tokens),
            usd(b.judge_usd),
            fixed(read, 2),
            fixed(write, 2),
            b.prices
        ),
        _ => format!(
            "not priced, neither Pi's recorded usage nor the catalog has a cache-read and a write price \
             (est. from the usage and the guard's records: reads saved {} tokens not sent, rewrites {} tokens \
             written again, judge {}; {edits})",
            tokens(b.saved_tokens),
            tokens(b.rewrite_tokens),
            usd(b.judge_usd)
        ),
    }
}

/// [`bill`] over the JSON text of a [`BillInput`]: the [`Bill`] as JSON.
pub fn bill_json(input: &str) -> Result<String, String> {
    let input = crate::read::from_json(input, BillInput::from_value).map_err(|e| format!("guard bill input: {e}"))?;
    serde_json::to_string(&bill(&input)).map_err(|e| format!("guard bill: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: f64 = 1e6;

    /// A reply's usage priced as the provider would: dollars per million tokens.
    fn request(input: f64, read: f64, write: f64, prices: Catalog) -> Event {
        Event::Request(Usage {
            input,
            cache_read: read,
            cache_write: write,
            cost_input: input * prices.input / M,
            cost_read: read * prices.cache_read / M,
            cost_write: write * prices.cache_write / M,
        })
    }

    const ANTHROPIC: Catalog = Catalog { input: 3.0, cache_read: 0.3, cache_write: 3.75 };
    const OPENAI: Catalog = Catalog { input: 2.0, cache_read: 0.5, cache_write: 0.0 };

    fn near(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} ≠ {b}");
    }

    #[test]
    fn anthropic_prices_with_a_write_premium() {
        // Requests of 10k, 14k, then an edit taking out 16k characters (4k tokens) of 14k + growth:
        // the next request reads 6k (up to the edit), writes 6k; the one after reads 12k and writes 1k.
        let p = ANTHROPIC;
        let events = vec![
            request(0.0, 0.0, 10_000.0, p),
            request(0.0, 10_000.0, 4_000.0, p),
            Event::Record { kept_chars: 16_000.0, cost_usd: 0.002, opening: false, lapsed: false },
            request(0.0, 6_000.0, 6_000.0, p),
            request(0.0, 12_000.0, 1_000.0, p),
        ];
        let b = bill(&BillInput { events, catalog: None });
        assert_eq!(b.edits, 1);
        // 4k tokens kept out, two requests after the edit.
        near(b.saved_tokens, 8_000.0);
        // Before 14k − removed 4k − read 6k = 4k written again (of the 6k written, 2k is growth).
        near(b.rewrite_tokens, 4_000.0);
        near(b.saved_usd.unwrap(), 8_000.0 * 0.3 / M);
        near(b.rewrite_usd.unwrap(), 4_000.0 * (3.75 - 0.3) / M);
        near(b.net_usd.unwrap(), 0.0024 - 0.0138 - 0.002);
        assert_eq!(b.prices, "usage");
        near(b.read_price.unwrap(), 0.3);
        near(b.write_price.unwrap(), 3.75);
        assert_eq!(b.answer, "cost $0.01 more on this session's bill so far (est.)");
        assert_eq!(b.short, "cost $0.01");
        assert_eq!(
            b.line,
            "lost ~$0.0134 (est. from Pi's recorded usage and the guard's records: reads saved $0.0024 for 8.0k \
             tokens not sent, at the cache-read price − rewrites $0.0138 for 4.0k tokens written again, at write \
             − read − judge $0.0020; 1 edit, prices $0.30/M read and $3.75/M write from usage)"
        );
    }

    #[test]
    fn the_sessions_tokens_per_character_and_a_lapsed_cache() {
        // A third of a token per character: the prompts grew by 2,100 tokens over 6,300 characters
        // (9,000 added, 6,000 kept out, 3,300 added).
        let p = ANTHROPIC;
        let events = vec![
            Event::Message { chars: 2_000.0 },
            request(0.0, 0.0, 5_000.0, p),
            Event::Message { chars: 9_000.0 },
            request(0.0, 5_000.0, 3_000.0, p),
            Event::Record { kept_chars: 6_000.0, cost_usd: 0.0, opening: false, lapsed: false },
            Event::Message { chars: 3_000.0 },
            // After a pause the cache lapsed: this request read nothing, and guard off would have
            // written the 2,000 tokens kept out too.
            request(0.0, 0.0, 7_000.0, p),
            Event::Message { chars: 300.0 },
            request(0.0, 7_000.0, 100.0, p),
        ];
        near(tokens_per_char(&events), 1.0 / 3.0);
        let b = bill(&BillInput { events: events.clone(), catalog: None });
        near(b.saved_tokens, 4_000.0);
        near(b.rewrite_tokens, 0.0);
        near(b.saved_usd.unwrap(), 2_000.0 * 3.75 / M + 2_000.0 * 0.3 / M);
        assert!(
            b.line.contains("at the cache-read price (the write price after a pause that let the cache lapse) −"),
            "{}",
            b.line
        );
        // Too few characters between the prompts to say, or a figure no text has: characters ÷ 4.
        near(tokens_per_char(&events[..2]), 0.25);
        let images = [
            Event::Message { chars: 5_000.0 },
            request(0.0, 0.0, 1_000.0, p),
            Event::Message { chars: 5_000.0 },
            request(0.0, 1_000.0, 8_000.0, p),
        ];
        near(tokens_per_char(&images), 0.25);
        // An opening pass's record comes after the request its edits were in (the first after a pause).
        let opening = vec![
            request(0.0, 0.0, 10_000.0, p),
            request(0.0, 0.0, 6_000.0, p),
            Event::Record { kept_chars: 16_000.0, cost_usd: 0.0, opening: true, lapsed: true },
            request(0.0, 6_000.0, 200.0, p),
        ];
        let b = bill(&BillInput { events: opening, catalog: None });
        near(b.saved_tokens, 8_000.0);
        near(b.rewrite_tokens, 0.0);
        near(b.saved_usd.unwrap(), 4_000.0 * 3.75 / M + 4_000.0 * 0.3 / M);
        // A background judge's answers that landed in a prompt's first request on a warm cache: that
        // request read up to the edit (6k of the 14k before it), and 14k − 4k kept out − 6k read = 4k
        // were written again, as after any other edit; the 4k kept out are reads saved, not writes.
        let in_request = vec![
            request(0.0, 0.0, 10_000.0, p),
            request(0.0, 10_000.0, 4_000.0, p),
            request(0.0, 6_000.0, 6_000.0, p),
            Event::Record { kept_chars: 16_000.0, cost_usd: 0.0, opening: true, lapsed: false },
            request(0.0, 12_000.0, 1_000.0, p),
        ];
        let b = bill(&BillInput { events: in_request, catalog: None });
        near(b.saved_tokens, 8_000.0);
        near(b.rewrite_tokens, 4_000.0);
        near(b.saved_usd.unwrap(), 8_000.0 * 0.3 / M);
        // A compaction starts the count again.
        let mut after = events.clone();
        after.insert(6, Event::Compaction);
        near(tokens_per_char(&after), 0.25);
    }

    #[test]
    fn openai_prices_without_a_write_premium() {
        // No cache writes: a token written again costs the uncached input price. 30 later requests.
        let p = OPENAI;
        let mut events = vec![request(1_000.0, 0.0, 0.0, p), request(200.0, 1_000.0, 0.0, p)];
        events.push(Event::Record { kept_chars: 400.0, cost_usd: 0.0, opening: false, lapsed: false });
        // 1,200 before − 100 removed − 1,000 read = 100 written again.
        events.push(request(300.0, 1_000.0, 0.0, p));
        for _ in 0..29 {
            events.push(request(100.0, 1_300.0, 0.0, p));
        }
        let b = bill(&BillInput { events, catalog: None });
        near(b.saved_tokens, 30.0 * 100.0);
        near(b.rewrite_tokens, 100.0);
        near(b.write_price.unwrap(), 2.0);
        near(b.rewrite_usd.unwrap(), 100.0 * 1.5 / M);
        near(b.net_usd.unwrap(), 3_000.0 * 0.5 / M - 100.0 * 1.5 / M);
        assert!(b.line.starts_with("saved ~$0.001"), "{}", b.line);
        assert_eq!(
            (b.short.as_str(), b.answer.as_str()),
            ("saved <$0.01", "saved <$0.01 on this session's bill so far (est.)")
        );
    }

    #[test]
    fn no_guard_edit_is_zero() {
        let events = vec![request(0.0, 0.0, 10_000.0, ANTHROPIC), request(0.0, 10_000.0, 500.0, ANTHROPIC)];
        let b = bill(&BillInput { events, catalog: None });
        assert_eq!((b.edits, b.saved_tokens, b.rewrite_tokens), (0, 0.0, 0.0));
        assert_eq!(b.net_usd, Some(0.0));
        assert_eq!(b.line, "$0 (no edit by the guard on this branch yet)");
        // A record that kept everything is no edit, but its judge was paid.
        let kept = serde_json::json!({"type": "record", "data": {"costUsd": 0.01,
            "results": [{"outcome": "kept", "beforeChars": 9000, "afterChars": 9000}]}});
        let input = BillInput::from_value(serde_json::json!({ "events": [kept] }));
        let b = bill(&input);
        assert_eq!(b.edits, 0);
        near(b.judge_usd, 0.01);
        assert!(b.line.starts_with("not priced"), "{}", b.line);
    }

    #[test]
    fn recall_brings_characters_back_and_a_compaction_ends_everything() {
        let p = ANTHROPIC;
        let events = vec![
            request(0.0, 0.0, 20_000.0, p),
            Event::Record { kept_chars: 40_000.0, cost_usd: 0.0, opening: false, lapsed: false },
            request(0.0, 5_000.0, 5_000.0, p),
            // 8,000 characters recalled: 32k characters (8k tokens) stay out.
            Event::Recall { chars: 8_000.0 },
            request(0.0, 10_000.0, 3_000.0, p),
            Event::Compaction,
            request(0.0, 0.0, 4_000.0, p),
        ];
        let b = bill(&BillInput { events, catalog: None });
        near(b.saved_tokens, 10_000.0 + 8_000.0);
        // 20k before − 10k removed − 5k read.
        near(b.rewrite_tokens, 5_000.0);
        // A recall of more than is kept out leaves nothing out, never less.
        let b = bill(&BillInput {
            events: vec![
                request(0.0, 0.0, 20_000.0, p),
                Event::Record { kept_chars: 4_000.0, cost_usd: 0.0, opening: false, lapsed: false },
                Event::Recall { chars: 9_000.0 },
                request(0.0, 19_000.0, 100.0, p),
            ],
            catalog: None,
        });
        near(b.saved_tokens, 0.0);
    }

    #[test]
    fn prices_fall_back_to_the_catalog_and_else_say_tokens_only() {
        // Usage with tokens but no dollars (a stand-in model): the catalog's prices.
        let free = Catalog::default();
        let events = vec![
            request(0.0, 0.0, 10_000.0, free),
            Event::Record { kept_chars: 8_000.0, cost_usd: 0.0, opening: false, lapsed: false },
            request(0.0, 4_000.0, 5_000.0, free),
        ];
        let b = bill(&BillInput { events: events.clone(), catalog: Some(ANTHROPIC) });
        assert_eq!(b.prices, "catalog");
        near(b.saved_usd.unwrap(), 2_000.0 * 0.3 / M);
        near(b.rewrite_usd.unwrap(), 4_000.0 * 3.45 / M);
        // A catalog without a cache write prices a rewrite at its input price.
        let b = bill(&BillInput { events: events.clone(), catalog: Some(OPENAI) });
        near(b.write_price.unwrap(), 2.0);
        // Zero prices and no catalog: tokens only, and no dollars in the JSON.
        for catalog in [None, Some(free)] {
            let b = bill(&BillInput { events: events.clone(), catalog });
            assert_eq!((b.prices.as_str(), b.net_usd, b.saved_usd), ("none", None, None));
            assert_eq!(
                b.line,
                "not priced, neither Pi's recorded usage nor the catalog has a cache-read and a write price (est. \
                 from the usage and the guard's records: reads saved 2.0k tokens not sent, rewrites 4.0k tokens \
                 written again, judge $0.0000; 1 edit)"
            );
        }
    }

    #[test]
    fn aborted_requests_and_bad_input_count_nothing() {
        let p = ANTHROPIC;
        let events = vec![
            request(0.0, 0.0, 10_000.0, p),
            Event::Record { kept_chars: 8_000.0, cost_usd: 0.0, opening: false, lapsed: false },
            // Aborted: no usage. The rewrite is measured on the next reply that has one.
            Event::Request(Usage::default()),
            request(0.0, 4_000.0, 5_000.0, p),
        ];
        let b = bill(&BillInput { events, catalog: None });
        near(b.saved_tokens, 2_000.0);
        near(b.rewrite_tokens, 4_000.0);
        // Broken JSON is an error value; odd events and fields count nothing.
        assert!(bill_json("{").is_err());
        let odd = r#"{"events": [{"type": "request", "usage": {"input": "x", "cacheRead": -5, "cost": 3}},
            {"type": "record", "data": {"results": "none", "costUsd": null}}, {"type": "what"}, 7], "catalog": 1}"#;
        let out: Value = serde_json::from_str(&bill_json(odd).unwrap()).unwrap();
        assert_eq!(out["edits"], 0);
        assert_eq!(out["line"], "$0 (no edit by the guard on this branch yet)");
        // An edit with no request after it has cost and saved nothing yet.
        let b = bill(&BillInput {
            events: vec![
                request(0.0, 0.0, 10_000.0, p),
                Event::Record { kept_chars: 8_000.0, cost_usd: 0.0, opening: false, lapsed: false },
            ],
            catalog: None,
        });
        assert_eq!((b.edits, b.saved_tokens, b.rewrite_tokens), (1, 0.0, 0.0));
    }
}
