//! The pure core of pi-context-guard.
//!
//! Everything here is a function of its inputs: no I/O, no clock, no host. The
//! TypeScript extension reads Pi, calls the classifier and draws; it hands plain
//! data to these modules (through the `context-guard-wasm` crate) and gets plain
//! data back. The core is tested natively with `cargo test` and never panics on
//! any input (see `fuzz/`).
//!
//! Sizes are counted in UTF-16 code units, as JavaScript counts them, because
//! every size here is compared with Pi's (`estimateTokens` is `text.length / 4`).
//!
//! Two parts over a shared base, imports going one way (checked by
//! `tests/layout.rs`):
//!
//! - the base, at the top level: [`text`] (text as JavaScript measures it),
//!   [`size`] (the size model), [`entry`] (Pi's entries and messages), [`read`]
//!   (the lenient JSON reader), [`kept`] (what the guard keeps out, as figures
//!   the report shows too), [`compaction`] (Pi's compaction threshold, which
//!   the report shows and the guard keeps the context under), [`decimal`]
//!   (numbers with fixed decimals, without `core::fmt`'s float code), [`order`]
//!   (the one sort, shared by every element type), [`json_text`] (a JSON
//!   string written by hand, fast);
//! - [`report`]: the `/context` report;
//! - [`guard`]: the guard (the run-end pass, recall, its figures and settings).
//!
//! `report` and `guard` import the base and never each other; the base imports
//! neither; no two modules import each other, directly or around a circle.

pub mod compaction;
pub mod decimal;
pub mod entry;
pub mod guard;
pub mod json_text;
pub mod kept;
pub mod order;
pub mod read;
pub mod report;
pub mod size;
#[cfg(test)]
pub mod testing;
pub mod text;

/// The version of the core, as built.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
