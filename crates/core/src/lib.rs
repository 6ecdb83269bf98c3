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

pub mod chunk;
pub mod decide;
pub mod entry;
pub mod exchange;
pub mod images;
pub mod items;
pub mod json;
pub mod pass;
pub mod read;
pub mod recall;
pub mod render;
pub mod report;
pub mod settings;
pub mod size;
pub mod span;
pub mod stats;
pub mod summary;
pub mod text;

/// The version of the core, as built.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
