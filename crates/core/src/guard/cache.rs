//! The prompt cache as the guard's cost rules see it: how much of the context
//! an edit makes the main model's provider write again (guard.md §4 run-end
//! break-even, §7 checkpoint break-even, §8).
//!
//! For: the one rewrite measure every break-even reads ([`Rewrite`]), by the
//! main model's provider, and the checkpoint's break-even factor. Not for: the
//! rules that weigh it (`exchange::pays_off` at run end, `checkpoint` mid-run)
//! or placing cache breakpoints (the cache issue's `before_provider_request`).
//!
//! The cache issue extends [`Rewrite::from`] per provider (the Anthropic read
//! point of §8); every caller then follows, since none measures on its own.

use serde::Serialize;
use serde_json::Value;

use crate::entry::ContextEntry;
use crate::read::Fields;

/// The main model (Pi's `ctx.model`), as far as its prompt cache matters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MainModel {
    /// Pi's provider id, such as `openai-codex`, `anthropic`.
    pub provider: String,
    /// Pi's API id, such as `anthropic-messages`, `openai-codex-responses`.
    pub api: String,
}

impl MainModel {
    pub fn from_value(v: Value) -> MainModel {
        let mut f = Fields::of(v);
        MainModel { provider: f.string("provider"), api: f.string("api") }
    }

    pub fn cache(&self) -> Cache {
        if self.provider == "openai-codex" || self.api == "openai-codex-responses" {
            Cache::OpenAiCodex
        } else if self.api == "anthropic-messages" {
            Cache::Anthropic
        } else {
            Cache::Prefix
        }
    }
}

/// How a provider's prompt cache reacts to an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    /// OpenAI Codex: after any edit the next request reads nothing from the
    /// cache (seed 001 RESULTS.md "Long autonomous runs": 2,560 or 0 tokens
    /// read after every checkpoint measured, wherever the edit was).
    OpenAiCodex,
    /// Anthropic: the rewrite starts after the read point the next request
    /// gets (§8). No read point is built yet, so the whole context (guard.md
    /// §7: "whole context with `pinAnthropicCache` off").
    Anthropic,
    /// Any other provider: a prefix cache, rewritten from the first edited entry on.
    Prefix,
}

impl Cache {
    /// The checkpoint break-even's factor (guard.md §7): 13 with the whole
    /// context for OpenAI Codex (seed 001: each checkpoint "pays back after
    /// about 8–10 later requests", so 13 leaves a margin); 16 otherwise
    /// (writing costs 12.5× reading on Anthropic, CACHE.md; the same 16 as the
    /// run-end exchange rule).
    pub fn checkpoint_factor(self) -> usize {
        match self {
            Cache::OpenAiCodex => 13,
            Cache::Anthropic | Cache::Prefix => 16,
        }
    }
}

/// The rewrite measure of one context: characters the provider writes again
/// when the earliest edited entry is entry `i`. Built once per pass (a suffix
/// sum), then asked per item.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rewrite {
    /// Context characters from each entry to the end (images by pixels).
    suffix: Vec<usize>,
    whole: usize,
    cache: Option<Cache>,
}

/// The one rewrite measure (see the module doc): the main model's provider
/// and the projected entries in, a [`Rewrite`] to ask per edited entry.
pub fn rewrite(model: &MainModel, entries: &[ContextEntry]) -> Rewrite {
    let mut suffix = vec![0usize; entries.len()];
    let mut sum = 0usize;
    for (i, e) in entries.iter().enumerate().rev() {
        sum = sum.saturating_add(e.messages.iter().map(crate::size::message_chars).sum());
        if let Some(slot) = suffix.get_mut(i) {
            *slot = sum;
        }
    }
    Rewrite { suffix, whole: sum, cache: Some(model.cache()) }
}

impl Rewrite {
    /// Characters written again when entry `first_edited` is the earliest edit.
    pub fn from(&self, first_edited: usize) -> usize {
        match self.cache.unwrap_or(Cache::Prefix) {
            Cache::OpenAiCodex | Cache::Anthropic => self.whole,
            Cache::Prefix => self.suffix.get(first_edited).copied().unwrap_or(0),
        }
    }

    /// The whole context's characters.
    pub fn whole(&self) -> usize {
        self.whole
    }

    pub fn cache(&self) -> Cache {
        self.cache.unwrap_or(Cache::Prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::span::tests::{entry, result, user};

    fn entries() -> Vec<ContextEntry> {
        vec![
            entry("u", user("0123456789")),
            entry("r1", result("c1", "bash", &"a".repeat(100))),
            entry("r2", result("c2", "bash", &"b".repeat(1000))),
        ]
    }

    fn model(provider: &str, api: &str) -> MainModel {
        MainModel { provider: provider.into(), api: api.into() }
    }

    #[test]
    fn a_prefix_cache_rewrites_from_the_first_edit() {
        let r = rewrite(&model("faux", "faux"), &entries());
        assert_eq!((r.from(0), r.from(1), r.from(2), r.from(3)), (1110, 1100, 1000, 0));
        assert_eq!(r.cache().checkpoint_factor(), 16);
    }

    #[test]
    fn codex_and_anthropic_rewrite_the_whole_context() {
        for m in [model("openai-codex", "openai-codex-responses"), model("x", "openai-codex-responses")] {
            let r = rewrite(&m, &entries());
            assert_eq!((r.from(2), r.cache().checkpoint_factor()), (1110, 13));
        }
        let r = rewrite(&model("anthropic", "anthropic-messages"), &entries());
        assert_eq!((r.from(2), r.cache().checkpoint_factor()), (1110, 16));
        assert_eq!(MainModel::from_value(serde_json::json!({"provider": 3})).cache(), Cache::Prefix);
    }
}
