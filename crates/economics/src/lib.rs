//! The economics: what an edit of the context costs and saves on the main
//! model's bill, and what the guard's edits came to so far.
//!
//! For: [`cache`] (the rewrite an edit makes the provider write again, the
//! outlook of later requests and the break-even decisions as the record keeps
//! them), [`worth`] (the one money rule every edit with a cache cost goes
//! through, and the estimate of later requests), [`bill`] (the guard's net
//! effect on the bill so far, and its one sentence) and [`pin`] (the
//! Anthropic cache breakpoints and the log of cache entries written). Not
//! for: which edits to make or when to ask the judge (the guard's crate,
//! `context_guard_guard`, calls these rules), nor reading Pi (the extension
//! hands over plain data).
//!
//! Invariants: it never reads the guard's settings: the guard passes the
//! plain numbers in (prices, factors, the estimator, counts of requests). The
//! rules' money is whole millionths of a dollar (micros) and prices are
//! micros per million tokens, so decisions compare exactly and read back from
//! a record as written; only the bill, an estimate from Pi's recorded costs,
//! sums dollars as floats for display. No I/O, no panic on any input.
//! docs/GUARD.md "Prompt cache" and "What it saved so far" give the rules.

pub mod bill;
pub mod cache;
pub mod pin;
pub mod worth;

#[cfg(test)]
pub(crate) use context_guard_base::testing;
pub(crate) use context_guard_base::{decimal, entry, kept, order, read, size, text};
