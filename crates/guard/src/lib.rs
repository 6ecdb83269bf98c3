//! The guard: what it decides at the end of a run and at a mid-run
//! checkpoint, from its settings, the branch and the judge's answers.
//! Everything `extension/guard/` asks of the core but what it reads back
//! (recall, figures, `/guard`, the audit: `context_guard_guard_read`).
//!
//! For, by concern:
//!
//! - the run: [`run`] (the run, its question, answer and history; the
//!   candidate outputs) and [`settings`] (the settings file);
//! - requests: [`classify`] (Pi's classifier types, the state of each kind of
//!   request, how an answer is read), below every module that asks, and
//!   [`judge`] (a chat model's prompt: the same questions, for a chat model;
//!   `classify` reads its reply);
//! - decisions: [`decide`] (the request of one segment of a large output and
//!   what its answer means);
//! - whole items: [`items`] (small outputs and the batching every whole item
//!   shares), [`exchange`] (old exchanges), [`images`] (old images);
//! - rendering: [`render`] (the marker, tool labels, the replacement text);
//! - the pass: [`pass`] (plan and finish at run end), [`checkpoint`] (a
//!   mid-run checkpoint's gates, then the pass's steps), [`memo`] (what the
//!   records say was judged), [`outcome`] (what it appends: drafts and the
//!   record), [`withhold`] (every request to the judge without its secrets)
//!   and [`wire`] (the pass's wire format, JSON written by hand; below
//!   `pass`, which calls it);
//! - [`segment_fit`]: `maxSegmentChars` as the classifier's context window
//!   allows;
//! - [`compaction`]: distill before Pi compacts (whether Pi is about to, and
//!   whether a checkpoint's edits keep it under the threshold).
//!
//! Not for: chunking and finding secrets (the scanner,
//! `context_guard_scan`), what an edit costs and the bill (the economics,
//! `context_guard_economics`), the `/context` report, or anything with I/O.
//!
//! Invariants: no I/O, no clock, no panic on any input (see `fuzz/`). The
//! settings stop here: the economics and the scanner get plain numbers and
//! lists from them. Within this crate, imports go one way (checked by
//! `tests/layout.rs`): a type two modules share sits in a module below both
//! (`classify`, `outcome`). docs/GUARD.md says what the guard does and why.
//!
//! The lower crates' modules are imported at the root under their own names
//! (`crate::text`, `crate::cache`, `crate::secrets`, …), for this crate's own
//! use only; the base's `compaction` is named in full, since the guard has
//! its own.

pub mod checkpoint;
pub mod classify;
pub mod compaction;
pub mod decide;
pub mod exchange;
pub mod images;
pub mod items;
pub mod judge;
pub mod memo;
pub mod outcome;
pub mod pass;
pub mod render;
pub mod run;
pub mod scanned;
pub mod segment_fit;
pub mod settings;
pub mod wire;
pub mod withhold;

pub(crate) use context_guard_base::deserialize_via_value;
#[cfg(test)]
pub(crate) use context_guard_base::testing;
pub(crate) use context_guard_base::{decimal, entry, json_text, order, read, size, text};
pub(crate) use context_guard_economics::{cache, worth};
pub(crate) use context_guard_scan::{chunk, secrets};
