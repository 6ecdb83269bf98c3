//! The secrets of each large tool output, found once when it arrives (at its
//! turn's end) rather than at the checkpoint that sends it to the judge
//! (docs/GUARD.md "What is withheld").
//!
//! For: [`Scanned`], what the extension keeps for a session between calls
//! (`Scans` in the wasm module): a pass or a checkpoint reads an output's
//! secrets from it when it holds them, and finds them itself otherwise. Not
//! for: finding secrets (`secrets`) or writing requests (`withhold`).
//!
//! Why it is safe to reuse: what is kept is the scan of the entry's raw
//! message (`ContextEntry::raw`, or its messages when no edit changed it),
//! which Pi never changes; an output is a candidate only while what the
//! model sees of it is that raw text (`run::outputs_where`; both read as
//! `run::output_text` reads a message); an id is unique in a session; and a
//! scan is used only for a text of the same length and under the same user
//! patterns.

use std::collections::BTreeMap;

use crate::entry::ContextEntry;
use crate::run::output_text;
use crate::secrets::{Found, Secrets};
use crate::settings::Settings;
use crate::text::js_len;

/// The secrets found in a session's large outputs, by entry id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scanned {
    /// The user's patterns the scans were made with (`secretPatterns`).
    patterns: Vec<String>,
    /// Entry id → the scanned text's length in bytes, and what was found in it.
    outputs: BTreeMap<String, (usize, Vec<Found>)>,
}

impl Scanned {
    /// Scans the tool outputs of `entries` at least `minResultChars` long
    /// that are not scanned yet. New user patterns make every earlier scan
    /// stale: they are dropped first. How many outputs were scanned.
    pub fn note(&mut self, entries: &[ContextEntry], settings: &Settings) -> usize {
        if self.patterns != settings.secret_patterns {
            self.outputs.clear();
            self.patterns.clone_from(&settings.secret_patterns);
        }
        let secrets = Secrets::new(&self.patterns);
        let mut scanned = 0;
        for e in entries {
            if self.outputs.contains_key(&e.id) {
                continue;
            }
            let Some(text) = e.raw.as_ref().or(e.messages.first()).and_then(output_text) else {
                continue;
            };
            if js_len(&text) < settings.min_result_chars {
                continue;
            }
            self.outputs.insert(e.id.clone(), (text.len(), secrets.find(&text)));
            scanned += 1;
        }
        scanned
    }

    /// What was found in entry `id`'s output when `text` is the text that
    /// was scanned, under the same user `patterns`.
    pub fn get(&self, id: &str, text: &str, patterns: &[String]) -> Option<&[Found]> {
        if self.patterns != patterns {
            return None;
        }
        let (len, found) = self.outputs.get(id)?;
        (*len == text.len()).then_some(found.as_slice())
    }
}
