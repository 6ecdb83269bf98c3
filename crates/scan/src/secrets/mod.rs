//! Secrets withheld from every request to the judge (issues 18 and 25;
//! docs/GUARD.md "What is withheld").
//!
//! For: finding secrets in a text ([`Secrets::find`]: provider key formats,
//! private key blocks, JSON web tokens, credentials in URLs, `Authorization`
//! headers, passwords and other assigned secrets in every line form, and the
//! user's own `secretPatterns`), writing a text with each one as a typed
//! placeholder (`[secret: aws-access-key]`), and telling files and commands
//! whose outputs are secrets ([`secret_file`]). Doing that to every string
//! of a pass's requests is `guard::withhold`. Not for: what stays in the window
//! (the local original: nothing here touches an entry, a draft or `recall`),
//! or deciding what to ask the judge.
//!
//! The parts: `scan` walks the text once (linear on any input, no regular
//! expression), `providers` lists the key formats, `names` the names that
//! hold secrets, `value` tells a secret from a word, a name in code, a path
//! or a number, `files` the files and commands. The user's patterns have
//! no prefilter: each scans the whole text with `regex-lite` (GUARD.md says
//! what they cost).

pub mod files;
pub mod names;
pub mod providers;
pub mod scan;
pub mod value;

pub use files::secret_file;
pub use value::entropy;

use regex_lite::Regex;

/// One secret in a text: its byte range and its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub start: usize,
    pub end: usize,
    pub kind: &'static str,
}

/// The kind of a user's pattern.
pub const CUSTOM: &str = "custom";

/// The secret finder: the built-in rules and the user's patterns.
pub struct Secrets {
    custom: Vec<Regex>,
}

impl Secrets {
    /// With the user's patterns (`secretPatterns`, validated by `settings`;
    /// one that does not compile here is left out).
    pub fn new(custom: &[String]) -> Secrets {
        Secrets { custom: custom.iter().filter_map(|p| compile_secret_pattern(p).ok()).collect() }
    }

    /// Every secret in `text`, in order, none overlapping.
    pub fn find(&self, text: &str) -> Vec<Found> {
        let mut found = scan::scan(text);
        for re in &self.custom {
            for m in re.find_iter(text) {
                if m.end() > m.start() {
                    found.push(Found { start: m.start(), end: m.end(), kind: CUSTOM });
                }
            }
        }
        let mut found = merge(found);
        let before = found.len();
        scan::partners(text, &mut found);
        if found.len() > before {
            found = merge(found);
        }
        found
    }
}

/// Sorted by start; overlapping or touching secrets become one (the first's kind).
fn merge(mut found: Vec<Found>) -> Vec<Found> {
    crate::order::sort_by(&mut found, |a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut out: Vec<Found> = Vec::with_capacity(found.len());
    for f in found {
        match out.last_mut() {
            Some(last) if f.start <= last.end => last.end = last.end.max(f.end),
            _ => out.push(f),
        }
    }
    out
}

/// A user's secret pattern compiled: `regex-lite` syntax (linear time, as
/// `recall`'s patterns), its compiled size bounded. The error is the reason
/// the settings' warning gives.
pub fn compile_secret_pattern(pattern: &str) -> Result<regex_lite::Regex, String> {
    if pattern.is_empty() {
        return Err("an empty pattern matches everything".to_string());
    }
    regex_lite::RegexBuilder::new(pattern).size_limit(1 << 20).build().map_err(|e| {
        let text = e.to_string();
        let line = text.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("it does not compile");
        crate::text::sanitize_line(line, 120)
    })
}

/// `text` with each secret as `[secret: <kind>]`.
pub fn redacted(text: &str, found: &[Found]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in found {
        out.push_str(text.get(at..f.start).unwrap_or(""));
        push_placeholder(&mut out, f.kind);
        at = f.end;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    out
}

/// For the corpus tests and the benchmark (the extension sends nothing
/// through it): `text` as a request would carry it, and what was found, as
/// `{"text": "…", "found": [[kind, secret], …]}`; `patterns` is the JSON text
/// of `secretPatterns` (anything but an array of strings reads as none).
pub fn withhold_text_json(text: &str, patterns: &str) -> String {
    // Read through `Value`: a typed read of `Vec<String>` brings serde's error
    // messages, and with them the formatting of floats, into the `.wasm`.
    let custom: Vec<String> = match serde_json::from_str::<serde_json::Value>(patterns) {
        Ok(serde_json::Value::Array(items)) if items.iter().all(serde_json::Value::is_string) => {
            items.into_iter().filter_map(|v| v.as_str().map(str::to_string)).collect()
        }
        _ => Vec::new(),
    };
    let found = Secrets::new(&custom).find(text);
    // Written by hand: a `serde_json::Value` here costs the `.wasm` a kilobyte.
    let push_str = |out: &mut String, s: &str| out.push_str(&serde_json::to_string(s).unwrap_or_default());
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str("{\"text\":");
    push_str(&mut out, &redacted(text, &found));
    out.push_str(",\"found\":[");
    for (k, f) in found.iter().enumerate() {
        out.push_str(if k == 0 { "[" } else { ",[" });
        push_str(&mut out, f.kind);
        out.push(',');
        push_str(&mut out, text.get(f.start..f.end).unwrap_or(""));
        out.push(']');
    }
    out.push_str("]}");
    out
}

fn push_placeholder(out: &mut String, kind: &str) {
    out.push_str("[secret: ");
    out.push_str(kind);
    out.push(']');
}

#[cfg(test)]
mod tests;
