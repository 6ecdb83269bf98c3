//! The base of pi-context-guard's core: what every other crate of the core
//! reads and measures with.
//!
//! For: [`text`] (text as JavaScript measures it, in UTF-16 code units),
//! [`size`] (the size model), [`entry`] (Pi's entries and messages), [`read`]
//! (the lenient JSON reader), [`decimal`] (numbers with fixed decimals,
//! without `core::fmt`'s float code), [`order`] (the one sort, shared by every
//! element type), [`kept`] (what the guard keeps out, as figures the report
//! shows too), [`compaction`] (Pi's compaction threshold, which the report
//! shows and the guard keeps the context under) and [`json_text`] (a JSON
//! string written by hand, fast). Not for: any decision of the report or the
//! guard; those live in the crates above.
//!
//! Invariants: everything is a function of its inputs (no I/O, no clock, no
//! host) and never panics on any input (see `fuzz/`). Sizes are UTF-16 code
//! units, as JavaScript counts them, because every size is compared with Pi's
//! (`estimateTokens` is `text.length / 4`). This crate depends on no other
//! crate of the workspace (docs/DESIGN.md "Shape").
//!
//! `testing` (entry builders for tests) exists only for tests: this crate's
//! own, and those of the crates above through the `testing` feature, which
//! only their dev-dependencies turn on.

pub mod compaction;
pub mod decimal;
pub mod entry;
pub mod json_text;
pub mod kept;
pub mod order;
pub mod read;
pub mod size;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod text;

/// The version of the core, as built (every crate of the workspace shares it).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
