//! The guard's read side: what the extension reads back from the guard's
//! records and edits on a branch, as text and figures.
//!
//! For: [`recall`] (what the `recall` tool returns), [`stats`] (what the guard
//! keeps out of the window, usage, the status bar), [`summary`] (the `/guard`
//! text) and [`audit`] (what the guard would do on a session recorded without
//! it, from the run-end pass's own planner). Not for: any decision or rule
//! of its own; what is kept out and why is the guard's (`context_guard_guard`),
//! and what it cost or saved is the economics' (`context_guard_economics`).
//!
//! Invariants: no I/O, no panic on any input (see `fuzz/`); nothing is
//! remembered between calls, so the figures follow `/tree`, reloads and
//! compaction. Nothing below depends on this crate. docs/GUARD.md "What you
//! see" and docs/AUDIT.md describe what these show.
//!
//! The crates below are imported at the root for this crate's own use: the
//! guard as `crate::guard`, the economics' and the base's modules under their
//! own names (`crate::cache`, `crate::text`, …).

pub mod audit;
pub mod recall;
pub mod stats;
pub mod summary;

pub(crate) use context_guard_base::deserialize_via_value;
#[cfg(test)]
pub(crate) use context_guard_base::testing;
pub(crate) use context_guard_base::{decimal, entry, json_text, kept, read, size, text};
pub(crate) use context_guard_economics::cache;
pub(crate) use context_guard_guard as guard;
