//! Withholding secrets from a pass's requests to the judge (issues 18 and 25;
//! docs/GUARD.md "What is withheld").
//!
//! For: writing every string of a pass's requests with each secret the
//! scanner finds ([`crate::secrets`]) as a typed placeholder, and
//! counting what was withheld ([`Withheld`], which the record and `/guard`
//! show). Not for: finding secrets (the scanner) or what stays in the window
//! (the local original: nothing here touches an entry, a draft or `recall`).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;

use crate::classify::{ClassifierContext, Ordered, RunFields, State};
use crate::secrets::{redacted, Found, Secrets};

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
/// `known`: outputs' secrets found before (`scanned`), by the address of
/// their requests' shared text; the others are found here.
pub fn withhold(
    requests: &mut [ClassifierContext],
    secrets: &Secrets,
    known: Vec<(*const u8, Vec<Found>)>,
    withheld: &mut Withheld,
) {
    let w = RefCell::new(std::mem::take(withheld));
    // Each distinct string scanned once: the requests of a pass repeat the
    // same labels of later calls (and counting a value again adds nothing).
    let done: RefCell<HashMap<String, Option<String>>> = RefCell::new(HashMap::new());
    let fix = |s: &mut String| {
        if let Some(seen) = done.borrow().get(s.as_str()) {
            if let Some(r) = seen {
                r.clone_into(s);
            }
            return;
        }
        let found = secrets.find(s);
        let fixed = (!found.is_empty()).then(|| {
            for f in &found {
                w.borrow_mut().count(f.kind, s.get(f.start..f.end).unwrap_or(""));
            }
            redacted(s, &found)
        });
        let key = match &fixed {
            Some(r) => std::mem::replace(s, r.clone()),
            None => s.clone(),
        };
        done.borrow_mut().insert(key, fixed);
    };
    // The output texts already scanned, by their shared text's address (each
    // counted when first met); the run's fields, which every request of a
    // pass repeats, scanned once.
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
                        let f = match known.iter().find(|(k, _)| *k == key) {
                            Some((_, f)) => f.clone(),
                            None => secrets.find(&s.chunks.text),
                        };
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
fn withhold_chunks(chunks: &mut crate::classify::Chunks, found: &[Found]) {
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
        *chunks = crate::classify::Chunks::of_texts(first, &refs);
        chunks.withheld = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn withhold_keeps_ids_and_counts_each_value_once() {
        use crate::classify::{Chunks, LargeState};
        let key = "AKIA4HK2JQ7ZT5XW9P3L";
        let output = format!("line one\nAWS_ACCESS_KEY_ID={key}\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV\n-----END RSA PRIVATE KEY-----\nlast line\n");
        // Chunk 2 ends inside the key block.
        let cut = output.find("MIIE").unwrap() + 10;
        let ranges = vec![(0, 9), (9, cut), (cut, output.len())];
        let state = LargeState {
            run: RunFields {
                situation: String::new(),
                earlier_conversation: None,
                user_question: format!("why does {key} fail?"),
                final_answer: None,
                agent_notes_during_the_run: None,
                agent_progress: None,
            },
            later_tool_calls: None,
            superseded: None,
            tool: "bash".into(),
            tool_arguments: format!("{{\"command\":\"echo {key}\"}}"),
            tool_status: None,
            output_size: "7 lines".into(),
            chunks: Chunks { first: 1, text: std::rc::Rc::from(output.as_str()), ranges, withheld: false },
        };
        let mut requests = vec![ClassifierContext {
            state: State::Large(state),
            questions: Ordered(Vec::new()),
            chunk_questions: None,
        }];
        let mut w = Withheld::default();
        withhold(&mut requests, &Secrets::new(&[]), Vec::new(), &mut w);
        let State::Large(s) = &requests[0].state else { panic!() };
        assert!(s.chunks.withheld);
        let texts: Vec<&str> = s.chunks.texts().collect();
        assert_eq!(texts[0], "line one\n");
        assert_eq!(texts[1], "AWS_ACCESS_KEY_ID=[secret: aws-access-key]\n[secret: private-key]");
        assert_eq!(texts[2], "[secret: private-key]\nlast line\n");
        assert_eq!(s.run.user_question, "why does [secret: aws-access-key] fail?");
        assert!(!serde_json::to_string(&requests[0]).unwrap().contains(key));
        assert_eq!(w.kinds, [("aws-access-key".to_string(), 1), ("private-key".to_string(), 1)]);
    }
}
