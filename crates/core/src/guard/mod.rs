//! The guard: what it does at the end of a run, what `recall` returns, its
//! figures and its settings (guard.md). Everything the extension's
//! `extension/guard/` asks the core.
//!
//! The modules, by concern:
//!
//! - the run: [`run`] (the run, its question, answer and history; the
//!   candidate outputs) and [`settings`] (the settings file);
//! - chunking: [`chunk`] (one output → chunks → segments);
//! - requests: [`classify`] (Pi's classifier types, the state of each kind of
//!   request, how an answer is read), below every module that asks, and
//!   [`judge`] (a chat model's prompt: the same questions, for a chat
//!   model; `classify` reads its reply);
//! - decisions: [`decide`] (the request of one segment of a large output and
//!   what its answer means);
//! - whole items: [`items`] (small outputs and the batching every whole item
//!   shares), [`exchange`] (old exchanges), [`images`] (old images);
//! - rendering: [`render`] (the marker, tool labels, the replacement text);
//! - the pass: [`pass`] (plan and finish at run end), [`checkpoint`] (a
//!   mid-run checkpoint's gates, then the pass's steps), [`cache`] (the
//!   rewrite an edit causes, which every break-even reads), [`pin`] (the
//!   Anthropic cache breakpoints and the log of entries written), [`memo`] (what
//!   the records say was judged), [`outcome`] (what it
//!   appends: drafts and the record) and [`wire`] (its wire format, JSON written by hand;
//!   below `pass`, which calls it);
//! - [`recall`]: what the `recall` tool returns;
//! - [`secrets`]: the secrets in a text (typed placeholders; files that are
//!   secrets), and [`withhold`]: every request to the judge without them;
//! - statistics: [`stats`] (the guard's figures, the status bar) and its
//!   `columns`;
//! - [`summary`]: the `/guard` text;
//! - [`bill`]: the guard's net effect on the main model's bill so far, which
//!   `/guard`, `/context` and the audit show;
//! - [`segment_fit`]: `maxSegmentChars` as the classifier's context window allows;
//! - [`compaction`]: distill before Pi compacts (whether Pi is about to, and
//!   whether a checkpoint's edits keep it under the threshold).
//!
//! Nothing here imports `crate::report`; the report reads what the guard keeps
//! out as `crate::kept::Stats`, from the base. Within the guard, imports go
//! one way too (`tests/layout.rs`): a type two modules share sits in a module
//! below both (`classify`, `outcome`).

pub mod audit;
pub mod bill;
pub mod cache;
pub mod checkpoint;
pub mod chunk;
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
pub mod pin;
pub mod recall;
pub mod render;
pub mod run;
pub mod secrets;
pub mod segment_fit;
pub mod settings;
pub mod stats;
pub mod summary;
pub mod wire;
pub mod withhold;
pub mod worth;
