//! The Anthropic cache pin (docs/GUARD.md, "The cache pin (Anthropic)"): where
//! the guard adds `cache_control` breakpoints to a Messages request, and the
//! log of cache entries this process saw itself write, which gives the read
//! point after an edit.
//!
//! For: the placement rules and the log's rules (what counts as written,
//! when an entry is refreshed or trusted). Not for: applying the marks to
//! Pi's payload or reading usage from Pi's events (`extension/guard/pin.ts`),
//! or what an edit costs (`cache`, which reads the log's read points).
//!
//! Why each breakpoint (Anthropic caches only prefixes that end at a
//! breakpoint, and looks back at most 20 blocks from each one):
//! - **question**: Pi's own rolling breakpoint sits on the last message, so
//!   after a run's first tool call the question's prefix is no longer marked
//!   and an edit anywhere after it would leave only the system prompt to
//!   read. A breakpoint on the latest question keeps its entry alive.
//! - **read point**: on the first request after edits, the latest entry this
//!   process saw written whose prefix is unchanged; the request reads it.
//! - **write anchor**: at the end of the tool-result batch holding the first
//!   changed block, so the rewritten part becomes an entry later edits can
//!   read from.

pub mod prefix;

use serde::Serialize;
use serde_json::Value;

use prefix::{Place, Prompt};

/// Anthropic allows at most 4 breakpoints in a request.
pub const MAX_BREAKPOINTS: usize = 4;

/// Anthropic's default cache lifetime, and the long one (`ttl: "1h"`).
const TTL_MS: f64 = 5.0 * 60.0 * 1000.0;
const TTL_LONG_MS: f64 = 60.0 * 60.0 * 1000.0;

/// The shortest prefix worth logging: Anthropic does not cache a prefix
/// under 1,024 tokens (Sonnet-class models; 4 characters a token).
const MIN_ENTRY_CHARS: usize = 4_096;

/// Usage comes in the provider's tokens, prefixes are measured in characters.
/// A response calibrates the two itself: what it read and wrote together ends
/// at the request's last breakpoint, so tokens per character =
/// (read + write) ÷ that breakpoint's characters. Without a write (nothing to
/// calibrate from) the usual 4 characters a token.
struct Scale {
    per_char: f64,
}

impl Scale {
    fn of(read: usize, write: usize, last_breakpoint_chars: usize) -> Scale {
        let per_char = if write > 0 && last_breakpoint_chars > 0 {
            (read.saturating_add(write)) as f64 / last_breakpoint_chars as f64
        } else {
            0.25
        };
        Scale { per_char }
    }

    fn tokens(&self, chars: usize) -> f64 {
        chars as f64 * self.per_char
    }

    /// `read` tokens end clearly past a prefix of `chars` characters: by 2 %
    /// and 16 tokens, so an estimate a little off never counts a prefix that
    /// was only reached, or only almost reached, as passed.
    fn clearly_past(&self, read: usize, chars: usize) -> bool {
        let t = self.tokens(chars);
        read as f64 >= t * 1.02 + 16.0
    }
}

/// Why the pin put a breakpoint somewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Why {
    Question,
    Read,
    Write,
}

/// One breakpoint to add: message `message`, content block `block`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mark {
    pub message: usize,
    pub block: usize,
    /// Pi's rolling `cache_control`, copied (TTL included).
    pub cache_control: Value,
    pub why: Why,
}

/// What to do to the payload, and why, for `/guard`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Plan {
    pub marks: Vec<Mark>,
    /// Remove `system[0]`'s breakpoint to stay within 4.
    #[serde(rename = "dropSystem")]
    pub drop_system: bool,
    /// One line for `/guard`: what was placed, or why nothing was.
    pub note: String,
}

/// A cache entry this process saw written.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    model: String,
    prefix: u64,
    chars: usize,
    tool_use_id: Option<String>,
    at_ms: f64,
    ttl_ms: f64,
}

/// The last request the pin saw, until its response's usage arrives.
#[derive(Debug, Clone, PartialEq, Default)]
struct Sent {
    model: String,
    at_ms: f64,
    /// Every block's prefix, in order.
    prefixes: Vec<u64>,
    /// Every block's own hash, in order.
    owns: Vec<u64>,
    /// The request's breakpoints after the pin: (prefix, chars, tool_use_id, ttl).
    breakpoints: Vec<(u64, usize, Option<String>, f64)>,
}

/// The pin's memory for one session: the entries it saw written, and the
/// last request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Log {
    entries: Vec<Entry>,
    last: Option<Sent>,
}

fn ttl_of(cache_control: &Value) -> f64 {
    if cache_control.get("ttl").and_then(Value::as_str) == Some("1h") {
        TTL_LONG_MS
    } else {
        TTL_MS
    }
}

impl Log {
    /// Plans the breakpoints of one request to `model` (`provider/id`) at
    /// `now_ms`, and remembers the request as it will be sent.
    pub fn plan(&mut self, body: &Value, model: &str, now_ms: f64) -> Plan {
        let prompt = prefix::read(body);
        let changed =
            self.first_changed(&prompt, model).map(|first| Changed { first, last: self.last_changed(&prompt, first) });
        let plan = place(&prompt, self.read_point(&prompt, model, now_ms), changed);
        self.remember(&prompt, &plan, model, now_ms);
        plan
    }

    /// [`Log::plan`] over JSON text: the request body in, the `Plan` out.
    /// The JSON is read and written in the core, not in the wasm crate:
    /// serde_json's generic code called from a second crate is a second copy
    /// of it in the `.wasm`.
    pub fn plan_json(&mut self, body: &str, model: &str, now_ms: f64) -> Result<String, String> {
        let body: Value = serde_json::from_str(body).map_err(|e| format!("request body: {e}"))?;
        serde_json::to_string(&self.plan(&body, model, now_ms)).map_err(|e| e.to_string())
    }

    /// [`Log::read_points`] as JSON text (`[]` if it could not be written).
    pub fn read_points_json(&self, model: &str, now_ms: f64) -> String {
        serde_json::to_string(&self.read_points(model, now_ms)).unwrap_or_else(|_| "[]".into())
    }

    /// The response to the last request: its usage, in tokens. Logs the
    /// breakpoints it wrote, and refreshes entries it read clearly past.
    pub fn observe(&mut self, model: &str, cache_read: usize, cache_write: usize) {
        let Some(sent) = self.last.as_ref().filter(|s| s.model == model) else {
            return;
        };
        let last_chars = sent.breakpoints.iter().map(|b| b.1).max().unwrap_or(0);
        let scale = Scale::of(cache_read, cache_write, last_chars);
        for e in self.entries.iter_mut().filter(|e| e.model == model) {
            if scale.clearly_past(cache_read, e.chars) && sent.prefixes.contains(&e.prefix) {
                e.at_ms = sent.at_ms;
            }
        }
        if cache_write == 0 {
            return;
        }
        // Written: the breakpoints past what was read (the read ends at one
        // of them, or before the first). The last one is certain: what was
        // written ends there, however little it was (a turn adds 1–2 % to a
        // long context); the others are estimated, so need a margin.
        for (prefix, chars, tool_use_id, ttl_ms) in &sent.breakpoints {
            let tokens = scale.tokens(*chars);
            let past = *chars == last_chars || tokens > cache_read as f64 + (tokens / 50.0).max(16.0);
            if *chars < MIN_ENTRY_CHARS || !past {
                continue;
            }
            self.entries.retain(|e| !(e.model == model && e.prefix == *prefix));
            self.entries.push(Entry {
                model: model.to_string(),
                prefix: *prefix,
                chars: *chars,
                tool_use_id: tool_use_id.clone(),
                at_ms: sent.at_ms,
                ttl_ms: *ttl_ms,
            });
        }
    }

    /// `tool_use_id`s of the live entries of `model` (within their TTL at
    /// `now_ms`) whose prefix the last request still had: where the next
    /// request may read from after an edit (the break-even's read points).
    pub fn read_points(&self, model: &str, now_ms: f64) -> Vec<String> {
        let Some(sent) = self.last.as_ref().filter(|s| s.model == model) else {
            return Vec::new();
        };
        self.entries
            .iter()
            .filter(|e| e.model == model && now_ms - e.at_ms < e.ttl_ms && sent.prefixes.contains(&e.prefix))
            .filter_map(|e| e.tool_use_id.clone())
            .collect()
    }

    /// The first block whose prefix differs from the last request's, when the
    /// last request went to the same model and something it held changed
    /// (an edit); `None` when the body only grew, or without certainty.
    fn first_changed(&self, prompt: &Prompt, model: &str) -> Option<usize> {
        let sent = self.last.as_ref().filter(|s| s.model == model)?;
        let same = prompt.blocks.iter().zip(&sent.prefixes).take_while(|(b, p)| b.prefix == **p).count();
        (same < sent.prefixes.len() && same < prompt.blocks.len()).then_some(same)
    }

    /// The last block, among those the last request also had, whose own
    /// content differs from that request's block at the same place, from
    /// `first` on. New blocks come at the end; an edit that removed a block
    /// shifts the rest, which then all differ, and the anchor goes later than
    /// the edit: never before it.
    fn last_changed(&self, prompt: &Prompt, first: usize) -> usize {
        let Some(sent) = self.last.as_ref() else {
            return first;
        };
        let common = sent.owns.len().min(prompt.blocks.len());
        (first..common).rev().find(|&i| prompt.blocks[i].own != sent.owns[i]).unwrap_or(first)
    }

    /// The latest logged entry of `model`, live at `now_ms`, whose prefix
    /// this body still has: its block.
    fn read_point(&self, prompt: &Prompt, model: &str, now_ms: f64) -> Option<usize> {
        let live: Vec<u64> =
            self.entries.iter().filter(|e| e.model == model && now_ms - e.at_ms < e.ttl_ms).map(|e| e.prefix).collect();
        if live.is_empty() {
            return None;
        }
        prompt.blocks.iter().rposition(|b| live.contains(&b.prefix))
    }

    fn remember(&mut self, prompt: &Prompt, plan: &Plan, model: &str, now_ms: f64) {
        let marked = |place: Place| match place {
            Place::Message(m, k) => {
                plan.marks.iter().find(|x| x.message == m && x.block == k).map(|x| &x.cache_control)
            }
            _ => None,
        };
        let breakpoints = prompt
            .blocks
            .iter()
            .filter_map(|b| {
                let dropped = plan.drop_system && b.place == Place::System(0);
                let cc = marked(b.place).or(if dropped { None } else { b.cache_control.as_ref() })?;
                Some((b.prefix, b.chars, b.tool_use_id.clone(), ttl_of(cc)))
            })
            .collect();
        // Entries past their TTL can never be read again: forget them.
        self.entries.retain(|e| now_ms - e.at_ms < e.ttl_ms);
        self.last = Some(Sent {
            model: model.to_string(),
            at_ms: now_ms,
            prefixes: prompt.blocks.iter().map(|b| b.prefix).collect(),
            owns: prompt.blocks.iter().map(|b| b.own).collect(),
            breakpoints,
        });
    }
}

/// The blocks an edit changed since the last request: the first and the last.
#[derive(Debug, Clone, Copy)]
struct Changed {
    first: usize,
    last: usize,
}

/// The breakpoints for one request, within Anthropic's 4: the
/// question, or after an edit the read point, the write anchor, then the
/// question (the read point's entry holds the question's prefix, so it is
/// the one that matters now; the anchor is where the next edit reads from).
fn place(prompt: &Prompt, read: Option<usize>, changed: Option<Changed>) -> Plan {
    let blocks = &prompt.blocks;
    // Pi's rolling breakpoint: the last one in `messages`. Without it Pi is
    // not caching this request (retention "none"), and neither does the pin.
    let Some(rolling) =
        blocks.iter().rev().find(|b| matches!(b.place, Place::Message(..)) && b.cache_control.is_some())
    else {
        return Plan { note: "no cache_control from Pi: nothing pinned".into(), ..Plan::default() };
    };
    let cc = rolling.cache_control.clone().unwrap_or(Value::Null);
    let messages = &prompt.messages;
    let last = messages.iter().rposition(|m| m.role != "system");
    let mut wanted: Vec<(usize, Why)> = Vec::new();
    // The question: the last text block of the latest user message with text
    // that is not the last message (trailing system messages skipped).
    if let Some(last) = last {
        let question = messages[..last]
            .iter()
            .rposition(|m| m.role == "user" && blocks[m.first..m.first + m.len].iter().any(|b| b.text));
        if let Some(q) = question.map(|q| &messages[q]) {
            if let Some(k) = blocks[q.first..q.first + q.len].iter().rposition(|b| b.text) {
                wanted.push((q.first + k, Why::Question));
            }
        }
    }
    if let Some(changed) = changed {
        let mut edit = Vec::new();
        if let Some(r) = read.filter(|r| *r < changed.first) {
            edit.push((r, Why::Read));
        }
        // The write anchor: the end of the user message (a tool-result batch)
        // that holds the last changed block, or the next one after it. A
        // checkpoint edits the outputs before the latest turns, and the next
        // one the outputs after those: it reads up to here.
        let holder = messages.iter().position(|m| m.first + m.len > changed.last && m.role == "user" && m.len > 0);
        if let Some(m) = holder.filter(|m| Some(*m) != last) {
            edit.push((messages[m].first + messages[m].len - 1, Why::Write));
        }
        if edit.first().is_some_and(|(_, why)| *why == Why::Read) {
            wanted.splice(0..0, edit);
        } else {
            wanted.extend(edit);
        }
    }
    let mut seen = Vec::new();
    wanted.retain(|(b, _)| {
        blocks[*b].cache_control.is_none() && !seen.contains(b) && {
            seen.push(*b);
            true
        }
    });
    if wanted.is_empty() {
        return Plan { note: "question already marked or none: nothing pinned".into(), ..Plan::default() };
    }
    let existing = blocks.iter().filter(|b| b.cache_control.is_some()).count();
    let mut room = MAX_BREAKPOINTS.saturating_sub(existing);
    let system0 = blocks.iter().any(|b| b.place == Place::System(0) && b.cache_control.is_some());
    let drop_system = room < wanted.len() && system0;
    if drop_system {
        room += 1;
    }
    if room == 0 {
        return Plan { note: format!("{existing} breakpoints already: nothing pinned"), ..Plan::default() };
    }
    wanted.truncate(room);
    let marks: Vec<Mark> = wanted
        .iter()
        .filter_map(|(b, why)| match blocks[*b].place {
            Place::Message(m, k) => Some(Mark { message: m, block: k, cache_control: cc.clone(), why: *why }),
            _ => None,
        })
        .collect();
    let names: Vec<&str> = marks
        .iter()
        .map(|m| match m.why {
            Why::Question => "question",
            Why::Read => "read point",
            Why::Write => "write anchor",
        })
        .collect();
    let note = format!(
        "{}{}",
        crate::text::join(&names, " + "),
        if drop_system { " (system breakpoint dropped)" } else { "" }
    );
    Plan { marks, drop_system, note }
}

#[cfg(test)]
mod tests;
