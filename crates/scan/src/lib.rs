//! The scanner: the two linear passes the guard makes over a tool output's
//! text before anything is sent to the judge.
//!
//! For: [`chunk`] (one output cut into chunks of whole lines, and chunks
//! grouped into segments; grep-style output by file) and [`secrets`] (the
//! secrets in a text, a text with each one as a typed placeholder, and the
//! files and commands whose outputs are secrets). Not for: what a request to
//! the judge says, which outputs are candidates, or withholding secrets from
//! a pass's requests; those are the guard's (`context_guard_guard`), which
//! calls this crate.
//!
//! Invariants: linear in the text on any input (a megabyte chunks and scans
//! in milliseconds; no regular expression but the user's own patterns),
//! never panics (see `fuzz/`), sizes in the base's UTF-16 code units. It
//! depends only on the base and reads no settings: the guard passes the
//! user's patterns and file list in (docs/GUARD.md "What is withheld").

pub mod chunk;
pub mod secrets;

pub(crate) use context_guard_base::{order, text};
