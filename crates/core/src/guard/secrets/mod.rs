//! Secrets withheld from every request to the judge (issues 18 and 25;
//! docs/GUARD.md "What is withheld").
//!
//! For: finding secrets in a text ([`Secrets::find`]: provider key formats,
//! private key blocks, JSON web tokens, credentials in URLs, `Authorization`
//! headers, passwords and other assigned secrets in every line form, and the
//! user's own `secretPatterns`), writing a text with each one as a typed
//! placeholder (`[secret: aws-access-key]`), doing that to every string of a
//! pass's requests ([`withhold`]), and telling files and commands whose
//! outputs are secrets ([`secret_file`]). Not for: what stays in the window
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

use std::borrow::Cow;
use std::cell::RefCell;

use regex_lite::Regex;

use crate::guard::classify::{ClassifierContext, Ordered, RunFields, State};
use crate::guard::settings::compile_secret_pattern;

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

/// What a pass withheld: secrets by kind (each distinct value once), and
/// the outputs not sent because their file is a secret.
#[derive(Debug, Clone, Default)]
pub struct Withheld {
    /// `(kind, count)`, in the order first seen.
    pub kinds: Vec<(String, usize)>,
    /// The labels of outputs of secret files (``read `.env` ``).
    pub files: Vec<String>,
    seen: Vec<u64>,
}

/// Equal when they say the same (the values seen are a pass's own memory).
impl PartialEq for Withheld {
    fn eq(&self, other: &Withheld) -> bool {
        self.kinds == other.kinds && self.files == other.files
    }
}

impl serde::Serialize for Withheld {
    /// `{"secrets": {"<kind>": n, …}, "files": ["read `.env`", …]}`, each part only when it has any.
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = ser.serialize_map(None)?;
        if !self.kinds.is_empty() {
            let kinds: serde_json::Map<String, serde_json::Value> =
                self.kinds.iter().map(|(k, n)| (k.clone(), serde_json::Value::from(*n))).collect();
            m.serialize_entry("secrets", &kinds)?;
        }
        if !self.files.is_empty() {
            m.serialize_entry("files", &self.files)?;
        }
        m.end()
    }
}

impl Withheld {
    /// As a record holds it (see `Serialize`); what is not of that shape is left out.
    pub fn from_value(v: &serde_json::Value) -> Withheld {
        let kinds = v
            .get("secrets")
            .and_then(serde_json::Value::as_object)
            .map(|m| m.iter().filter_map(|(k, n)| Some((k.clone(), usize::try_from(n.as_u64()?).ok()?))).collect())
            .unwrap_or_default();
        let files = v
            .get("files")
            .and_then(serde_json::Value::as_array)
            .map(|a| a.iter().filter_map(|f| f.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        Withheld { kinds, files, seen: Vec::new() }
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty() && self.files.is_empty()
    }

    /// How many secrets in all.
    pub fn secrets(&self) -> usize {
        self.kinds.iter().map(|(_, n)| n).sum()
    }

    fn count(&mut self, kind: &str, value: &str) {
        let mut h = crate::text::FNV_OFFSET;
        for &b in kind.as_bytes().iter().chain([0u8].iter()).chain(value.as_bytes()) {
            h = crate::text::fnv_step(h, b);
        }
        if self.seen.contains(&h) {
            return;
        }
        self.seen.push(h);
        match self.kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, n)) => *n += 1,
            None => self.kinds.push((kind.to_string(), 1)),
        }
    }
}

/// Withholds every secret from every string of `requests`, in place; the
/// chunks of a large output are read as one text (a key block cut across two
/// chunks is found whole), and a request whose chunks changed is marked so
/// that they cross as strings (`Chunks::withheld`), never as ranges of the
/// extension's text. Chunk ids, questions and everything else stay.
pub fn withhold(requests: &mut [ClassifierContext], secrets: &Secrets, withheld: &mut Withheld) {
    let w = RefCell::new(std::mem::take(withheld));
    let fix = |s: &mut String| {
        let found = secrets.find(s);
        if found.is_empty() {
            return;
        }
        for f in &found {
            w.borrow_mut().count(f.kind, s.get(f.start..f.end).unwrap_or(""));
        }
        *s = redacted(s, &found);
    };
    // The output texts already scanned, by their shared text's address; the
    // run's fields, which every request of a pass repeats, scanned once.
    let mut outputs: Vec<(*const u8, Vec<Found>)> = Vec::new();
    let mut runs: Option<(RunFields, RunFields)> = None;
    let mut run_once = |run: &mut RunFields| match &runs {
        Some((seen, done)) if seen == run => *run = done.clone(),
        _ => {
            let seen = run.clone();
            run_fields(run, &fix);
            runs = Some((seen, run.clone()));
        }
    };
    for r in requests.iter_mut() {
        match &mut r.state {
            State::Large(s) => {
                run_once(&mut s.run);
                for c in s.later_tool_calls.iter_mut().flatten() {
                    fix(c);
                }
                fix(&mut s.tool_arguments);
                let key = s.chunks.text.as_ptr();
                let found = match outputs.iter().find(|(k, _)| *k == key) {
                    Some((_, f)) => f.clone(),
                    None => {
                        let f = secrets.find(&s.chunks.text);
                        for x in &f {
                            w.borrow_mut().count(x.kind, s.chunks.text.get(x.start..x.end).unwrap_or(""));
                        }
                        outputs.push((key, f.clone()));
                        f
                    }
                };
                withhold_chunks(&mut s.chunks, &found);
            }
            State::Small(s) => {
                run_once(&mut s.run);
                each(&mut s.outputs, |item| {
                    fix(&mut item.tool);
                    fix(&mut item.output);
                });
            }
            State::Exchange(s) => {
                run_once(&mut s.run);
                each(&mut s.exchanges, |item| {
                    fix(&mut item.user);
                    fix(&mut item.assistant);
                    for c in &mut item.tool_calls {
                        fix(c);
                    }
                });
            }
        }
    }
    *withheld = w.into_inner();
}

fn each<V>(items: &mut Ordered<V>, mut f: impl FnMut(&mut V)) {
    for (_, v) in &mut items.0 {
        f(v);
    }
}

fn run_fields(run: &mut RunFields, fix: &dyn Fn(&mut String)) {
    if let Some(e) = &mut run.earlier_conversation {
        for s in [&mut e.summary, &mut e.first_request].into_iter().flatten() {
            fix(s);
        }
        for x in &mut e.recent_exchanges {
            fix(&mut x.user);
            fix(&mut x.assistant);
        }
    }
    fix(&mut run.user_question);
    for s in [&mut run.final_answer, &mut run.agent_notes_during_the_run].into_iter().flatten() {
        fix(s);
    }
    if let Some(p) = &mut run.agent_progress {
        fix(&mut p.latest_note);
        if let Some(s) = &mut p.earlier_notes {
            fix(s);
        }
    }
}

/// The chunks with the secrets that touch them as placeholders (a secret cut
/// by a chunk's edge is withheld on both sides).
fn withhold_chunks(chunks: &mut crate::guard::classify::Chunks, found: &[Found]) {
    if found.is_empty() {
        return;
    }
    let text = &chunks.text;
    let mut changed = false;
    let texts: Vec<Cow<str>> = chunks
        .ranges
        .iter()
        .map(|&(a, z)| {
            let chunk = text.get(a..z).unwrap_or("");
            let inside: Vec<Found> = found
                .iter()
                .filter(|f| f.start < z && f.end > a)
                .map(|f| Found { start: f.start.max(a) - a, end: f.end.min(z) - a, kind: f.kind })
                .collect();
            if inside.is_empty() {
                Cow::Borrowed(chunk)
            } else {
                changed = true;
                Cow::Owned(redacted(chunk, &inside))
            }
        })
        .collect();
    if changed {
        let refs: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
        let first = chunks.first;
        *chunks = crate::guard::classify::Chunks::of_texts(first, &refs);
        chunks.withheld = true;
    }
}

#[cfg(test)]
mod tests;
