//! Reading [`ContextInputs`] and [`MessageText`] from their JSON text, by hand.
//!
//! For: the report's two inputs, read strictly as serde's derived code read
//! them before: a missing field is its default, `null` is "none" where the
//! field is optional (and NaN for the two lenient numbers), and any other
//! value of the wrong type fails the whole report, here with a message that
//! names the field (`invalid type: messages.kinds[0].role should be a
//! string`). Unknown fields are ignored. Not for: the guard's inputs, which
//! are lenient (`context_guard_base::read`).
//!
//! Why by hand: serde's derived code for these eleven types, and the error
//! messages it can produce (which format floats with `core::fmt`'s float
//! code), were about 30 KB of the `.wasm` (budget: `pkg/*.wasm` ≤ 512 KB);
//! the JSON is parsed into a `serde_json::Value` as every guard input is.

use serde_json::{Map, Value};

use super::kept_detail::{KeptInputs, KeptResult};
use super::requests::RequestInputs;
use super::{
    CompactionDefaults, CompactionInputs, ContextInputs, HistoryInputs, HostUsage, Kind, LatestCompaction, MessageText,
    Messages, ModelRef, SystemInputs, ToolDigest, MAX_SAFE,
};

type Read<T> = Result<T, String>;

/// [`ContextInputs`] from its JSON text (the per-message columns are not in
/// it; `build_json` sets them). Errors start with `context inputs:`.
pub fn context_inputs(json: &str) -> Read<ContextInputs> {
    let value: Value = serde_json::from_str(json).map_err(|e| format!("context inputs: {e}"))?;
    let f = Obj::of(value, String::new(), "an object").map_err(|e| format!("context inputs: {e}"))?;
    inputs(f).map_err(|e| format!("context inputs: {e}"))
}

/// One message's [`MessageText`] from the host's JSON text; `None` when the
/// text is not JSON or a field has the wrong type.
pub fn message_text(json: &str) -> Option<MessageText> {
    let value: Value = serde_json::from_str(json).ok()?;
    let mut f = Obj::of(value, String::new(), "an object").ok()?;
    Some(MessageText {
        tool_name: f.opt_string("toolName").ok()?,
        command: f.opt_string("command").ok()?,
        text: f.opt_string("text").ok()?,
    })
}

fn inputs(mut f: Obj) -> Read<ContextInputs> {
    Ok(ContextInputs {
        usage: f.opt_object("usage", |mut u| {
            Ok(HostUsage {
                tokens: u.opt_number("tokens")?,
                context_window: u.opt_number("contextWindow")?,
                percent: u.opt_number("percent")?,
            })
        })?,
        model: f.opt_object("model", |mut m| {
            Ok(ModelRef {
                provider: m.string("provider")?,
                id: m.string("id")?,
                context_window: m.opt_number("contextWindow")?,
            })
        })?,
        system: f.object("system", |mut s| {
            Ok(SystemInputs {
                content: s.string("content")?,
                sections: s.list("sections", |v, at| {
                    let mut n = Obj::of(v, at, "an object")?;
                    Ok((n.string("name")?, n.string("text")?))
                })?,
                tools: s.list("tools", |v, at| {
                    let mut t = Obj::of(v, at, "an object")?;
                    Ok(ToolDigest { name: t.string("name")?, chars: t.whole("chars", MAX_SAFE)? })
                })?,
                tools_chars: s.whole("toolsChars", MAX_SAFE)?,
            })
        })?,
        compaction: f.object("compaction", |mut c| {
            Ok(CompactionInputs {
                settings: match c.take("settings") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(v),
                },
                defaults: c.object("defaults", |mut d| {
                    let defaults = CompactionDefaults::default();
                    Ok(CompactionDefaults {
                        enabled: d.boolean("enabled", defaults.enabled)?,
                        reserve_tokens: d.lenient_number("reserveTokens", defaults.reserve_tokens)?,
                    })
                })?,
            })
        })?,
        messages: f.object("messages", |mut m| {
            Ok(Messages {
                tokens: Vec::new(),
                kind: Vec::new(),
                kinds: m.list("kinds", |v, at| {
                    let mut k = Obj::of(v, at, "an object")?;
                    Ok(Kind {
                        role: k.string("role")?,
                        custom_type: k.opt_string("customType")?,
                        tool_name: k.opt_string("toolName")?,
                    })
                })?,
            })
        })?,
        history: f.object("history", |mut h| {
            Ok(HistoryInputs {
                count: u32::try_from(h.whole("count", u64::from(u32::MAX))?).unwrap_or(u32::MAX),
                latest: h.opt_object("latest", |mut l| {
                    Ok(LatestCompaction {
                        tokens_before: l.lenient_number("tokensBefore", 0.0)?,
                        summary: l.string("summary")?,
                    })
                })?,
                kept: h.list("kept", |v, at| {
                    whole(&v, &at, usize_max()).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                })?,
            })
        })?,
        compacted_from: f.opt_number("compactedFrom")?,
        requests: f.object("requests", |mut r| {
            // The series and its marks cross as typed arrays (`build_json`), never in the JSON.
            Ok(RequestInputs {
                tokens: Vec::new(),
                marks: Vec::new(),
                last: r.opt_object("last", |mut l| {
                    Ok([
                        l.lenient_number("input", 0.0)?,
                        l.lenient_number("cacheRead", 0.0)?,
                        l.lenient_number("cacheWrite", 0.0)?,
                    ])
                })?,
                cost: r.opt_number("cost")?,
            })
        })?,
        kept_detail: f.opt_object("keptDetail", |mut k| {
            Ok(KeptInputs {
                results: k.list("results", |v, at| {
                    let mut r = Obj::of(v, at, "an object")?;
                    Ok(KeptResult {
                        at: usize::try_from(r.whole("at", usize_max())?).unwrap_or(usize::MAX),
                        kind: r.string("kind")?,
                        entry_id: r.string("entryId")?,
                        tool: r.string("tool")?,
                        outcome: r.string("outcome")?,
                        saved: r.lenient_number("saved", 0.0)?,
                    })
                })?,
                recalls: k.list("recalls", |v, at| {
                    let mut r = Obj::of(v, at, "an object")?;
                    Ok((usize::try_from(r.whole("at", usize_max())?).unwrap_or(usize::MAX), r.string("entryId")?))
                })?,
            })
        })?,
        // Lenient inside, as the guard writes it; only `null` is none.
        guard: match f.take("guard") {
            None | Some(Value::Null) => None,
            Some(v) => Some(context_guard_base::kept::Stats::from_value(v)),
        },
    })
}

/// An object's fields, with the path that names them in messages.
struct Obj {
    map: Map<String, Value>,
    at: String,
}

fn wrong(at: &str, what: &str) -> String {
    format!("invalid type: {at} should be {what}")
}

/// A whole number from 0 to `max` (`u32::MAX`, `usize::MAX`), as serde reads
/// one: a fraction or a number out of range fails.
fn whole(v: &Value, at: &str, max: u64) -> Read<u64> {
    match v {
        Value::Number(n) => match n.as_u64().filter(|&n| n <= max) {
            Some(n) => Ok(n),
            None => Err(format!("invalid value: {at} should be a whole number from 0 to {max}")),
        },
        _ => Err(wrong(at, "a whole number")),
    }
}

/// The largest `usize`, as `whole` takes it.
fn usize_max() -> u64 {
    u64::try_from(usize::MAX).unwrap_or(u64::MAX)
}

impl Obj {
    /// The fields of an object; anything else fails, naming `what` it should be.
    fn of(v: Value, at: String, what: &str) -> Read<Obj> {
        match v {
            Value::Object(map) => Ok(Obj { map, at }),
            _ => Err(wrong(if at.is_empty() { "the input" } else { &at }, what)),
        }
    }

    fn path(&self, key: &str) -> String {
        if self.at.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.at)
        }
    }

    /// A field's value moved out; `None` when the field is missing (its
    /// default applies). Taken, not removed (the B-tree's removal code).
    fn take(&mut self, key: &str) -> Option<Value> {
        self.map.get_mut(key).map(Value::take)
    }

    fn string(&mut self, key: &str) -> Read<String> {
        match self.take(key) {
            None => Ok(String::new()),
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(wrong(&self.path(key), "a string")),
        }
    }

    fn opt_string(&mut self, key: &str) -> Read<Option<String>> {
        match self.take(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(wrong(&self.path(key), "a string or null")),
        }
    }

    fn opt_number(&mut self, key: &str) -> Read<Option<f64>> {
        match self.take(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(_) => Err(wrong(&self.path(key), "a number or null")),
        }
    }

    /// A number that JSON may carry as `null` (JavaScript's `NaN` and
    /// infinities stringify to `null`): read as NaN, which `whole_tokens`
    /// turns into 0.
    fn lenient_number(&mut self, key: &str, default: f64) -> Read<f64> {
        match self.take(key) {
            None => Ok(default),
            Some(Value::Null) => Ok(f64::NAN),
            Some(Value::Number(n)) => Ok(n.as_f64().unwrap_or(f64::NAN)),
            Some(_) => Err(wrong(&self.path(key), "a number or null")),
        }
    }

    fn boolean(&mut self, key: &str, default: bool) -> Read<bool> {
        match self.take(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(b),
            Some(_) => Err(wrong(&self.path(key), "true or false")),
        }
    }

    /// A whole number from 0 to `max`; 0 when missing.
    fn whole(&mut self, key: &str, max: u64) -> Read<u64> {
        match self.take(key) {
            None => Ok(0),
            Some(v) => whole(&v, &self.path(key), max),
        }
    }

    /// An array read item by item; each item's path is `key[i]`.
    fn list<T>(&mut self, key: &str, mut item: impl FnMut(Value, String) -> Read<T>) -> Read<Vec<T>> {
        match self.take(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => {
                let at = self.path(key);
                items.into_iter().enumerate().map(|(i, v)| item(v, format!("{at}[{i}]"))).collect()
            }
            Some(_) => Err(wrong(&self.path(key), "a list")),
        }
    }

    /// A nested object that must be there when the field is (`null` fails).
    fn object<T: Default>(&mut self, key: &str, read: impl FnOnce(Obj) -> Read<T>) -> Read<T> {
        match self.take(key) {
            None => Ok(T::default()),
            Some(v) => read(Obj::of(v, self.path(key), "an object")?),
        }
    }

    fn opt_object<T>(&mut self, key: &str, read: impl FnOnce(Obj) -> Read<T>) -> Read<Option<T>> {
        match self.take(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => read(Obj::of(v, self.path(key), "an object or null")?).map(Some),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_read() {
        let json = r#"{
            "usage": {"tokens": 1200, "contextWindow": 200000, "percent": 0.6},
            "model": {"provider": "anthropic", "id": "claude", "contextWindow": 200000},
            "system": {"content": "You are Pi.", "sections": [{"name": "preamble", "text": "p"}, {"name": "cwd", "text": "c"}],
                       "tools": [{"name": "bash", "chars": 120}], "toolsChars": 122},
            "compaction": {"settings": {"enabled": false}, "defaults": {"enabled": true, "reserveTokens": 16384}},
            "messages": {"kinds": [{"role": "user"}, {"role": "custom", "customType": "note"},
                                   {"role": "toolResult", "toolName": "read"}], "tokens": [1]},
            "history": {"count": 2, "latest": {"tokensBefore": 90000, "summary": "s"}, "kept": [0, 3]},
            "compactedFrom": 90000.5,
            "guard": {"savedChars": 400, "items": "odd"},
            "requests": {"tokens": [1600], "last": {"input": 600, "cacheRead": 28000, "cacheWrite": null}, "cost": 0.25},
            "keptDetail": {"results": [{"at": 4, "kind": "large", "entryId": "e1", "tool": "bash", "outcome": "distilled", "saved": 900}],
                           "recalls": [{"at": 7, "entryId": "e1"}]},
            "unknown": [1, 2]
        }"#;
        let i = context_inputs(json).expect("inputs");
        let usage = i.usage.expect("usage");
        assert_eq!((usage.tokens, usage.context_window, usage.percent), (Some(1200.0), Some(200000.0), Some(0.6)));
        let model = i.model.expect("model");
        assert_eq!(
            (model.provider.as_str(), model.id.as_str(), model.context_window),
            ("anthropic", "claude", Some(200000.0))
        );
        assert_eq!(i.system.content, "You are Pi.");
        let sections: Vec<(&str, &str)> = i.system.sections.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
        assert_eq!(sections, [("preamble", "p"), ("cwd", "c")], "in the message's order");
        assert_eq!(
            (i.system.tools[0].name.as_str(), i.system.tools[0].chars, i.system.tools_chars),
            ("bash", 120, 122)
        );
        assert_eq!(i.compaction.settings, Some(serde_json::json!({"enabled": false})));
        assert!(i.compaction.defaults.enabled);
        assert_eq!(i.compaction.defaults.reserve_tokens, 16384.0);
        assert_eq!(
            i.messages.kinds,
            [
                Kind { role: "user".into(), custom_type: None, tool_name: None },
                Kind { role: "custom".into(), custom_type: Some("note".into()), tool_name: None },
                Kind { role: "toolResult".into(), custom_type: None, tool_name: Some("read".into()) }
            ]
        );
        assert!(i.messages.tokens.is_empty(), "the columns come as typed arrays, never from the JSON");
        assert_eq!(i.history.count, 2);
        let latest = i.history.latest.expect("latest");
        assert_eq!((latest.tokens_before, latest.summary.as_str()), (90000.0, "s"));
        assert_eq!(i.history.kept, [0, 3]);
        assert_eq!(i.compacted_from, Some(90000.5));
        assert!(i.requests.tokens.is_empty(), "the series comes as a typed array, never from the JSON");
        let last = i.requests.last.expect("last");
        assert!(last[0] == 600.0 && last[1] == 28000.0 && last[2].is_nan());
        assert_eq!(i.requests.cost, Some(0.25));
        let kept = i.kept_detail.expect("kept detail");
        let r = &kept.results[0];
        assert_eq!(
            (r.at, r.kind.as_str(), r.entry_id.as_str(), r.tool.as_str(), r.outcome.as_str()),
            (4, "large", "e1", "bash", "distilled")
        );
        assert_eq!((r.saved, kept.recalls.clone()), (900.0, vec![(7, "e1".to_string())]));
        let guard = i.guard.expect("guard");
        assert_eq!((guard.saved_chars, guard.items), (400, 0), "the guard's figures are read leniently");
    }

    #[test]
    fn missing_fields_are_defaults_and_null_is_none_where_optional() {
        let i = context_inputs("{}").expect("inputs");
        assert!(i.usage.is_none() && i.model.is_none() && i.guard.is_none() && i.compacted_from.is_none());
        assert!(i.system.content.is_empty() && i.system.tools.is_empty() && i.messages.kinds.is_empty());
        assert!(i.compaction.defaults.enabled, "Pi's defaults when the extension could not read them");
        assert_eq!(i.compaction.defaults.reserve_tokens, 16_384.0);
        let i = context_inputs(r#"{"compaction": {"defaults": {}}, "history": {"latest": {}}}"#).expect("inputs");
        assert_eq!((i.compaction.defaults.enabled, i.compaction.defaults.reserve_tokens), (true, 16_384.0));
        assert_eq!(i.history.latest.expect("latest").tokens_before, 0.0);
        let nulls = r#"{"usage": null, "model": null, "compactedFrom": null, "guard": null,
            "compaction": {"settings": null, "defaults": {"reserveTokens": null}},
            "history": {"latest": {"tokensBefore": null}},
            "messages": {"kinds": [{"role": "custom", "customType": null}]}}"#;
        let i = context_inputs(nulls).expect("inputs");
        assert!(i.usage.is_none() && i.model.is_none() && i.compacted_from.is_none() && i.guard.is_none());
        assert!(i.compaction.settings.is_none());
        assert!(i.compaction.defaults.reserve_tokens.is_nan(), "NaN, which whole_tokens reads as 0");
        assert!(i.history.latest.expect("latest").tokens_before.is_nan());
        assert_eq!(i.messages.kinds[0].custom_type, None);
        let usage = context_inputs(r#"{"usage": {"tokens": null, "contextWindow": 1000}}"#).expect("inputs");
        assert_eq!(usage.usage.map(|u| (u.tokens, u.context_window)), Some((None, Some(1000.0))));
    }

    #[test]
    fn a_wrong_type_fails_naming_the_field() {
        let cases = [
            ("[]", "context inputs: invalid type: the input should be an object"),
            (r#"{"system": {"content": null}}"#, "context inputs: invalid type: system.content should be a string"),
            (r#"{"usage": 5}"#, "context inputs: invalid type: usage should be an object or null"),
            (r#"{"usage": {"tokens": "5"}}"#, "context inputs: invalid type: usage.tokens should be a number or null"),
            (r#"{"system": {"tools": {}}}"#, "context inputs: invalid type: system.tools should be a list"),
            (
                r#"{"system": {"tools": [{"name": 1}]}}"#,
                "context inputs: invalid type: system.tools[0].name should be a string",
            ),
            (
                r#"{"system": {"sections": [{"name": "a", "text": 1}]}}"#,
                "context inputs: invalid type: system.sections[0].text should be a string",
            ),
            (
                r#"{"system": {"toolsChars": -1}}"#,
                "context inputs: invalid value: system.toolsChars should be a whole number from 0 to 9007199254740991",
            ),
            (r#"{"compaction": null}"#, "context inputs: invalid type: compaction should be an object"),
            (
                r#"{"compaction": {"defaults": {"enabled": 1}}}"#,
                "context inputs: invalid type: compaction.defaults.enabled should be true or false",
            ),
            (
                r#"{"messages": {"kinds": [{"role": "user"}, {"role": 42}]}}"#,
                "context inputs: invalid type: messages.kinds[1].role should be a string",
            ),
            (r#"{"history": {"count": true}}"#, "context inputs: invalid type: history.count should be a whole number"),
            (
                r#"{"history": {"count": -1}}"#,
                "context inputs: invalid value: history.count should be a whole number from 0 to 4294967295",
            ),
            (
                r#"{"history": {"count": 4294967296}}"#,
                "context inputs: invalid value: history.count should be a whole number from 0 to 4294967295",
            ),
            (
                r#"{"history": {"kept": [1.5]}}"#,
                "context inputs: invalid value: history.kept[0] should be a whole number",
            ),
            (r#"{"compactedFrom": "x"}"#, "context inputs: invalid type: compactedFrom should be a number or null"),
            (r#"{"requests": {"last": 1}}"#, "context inputs: invalid type: requests.last should be an object or null"),
            (
                r#"{"keptDetail": {"recalls": [{"at": "1"}]}}"#,
                "context inputs: invalid type: keptDetail.recalls[0].at should be a whole number",
            ),
            (
                r#"{"requests": {"cost": "1"}}"#,
                "context inputs: invalid type: requests.cost should be a number or null",
            ),
        ];
        for (json, message) in cases {
            let got = context_inputs(json).map(|_| ()).unwrap_err();
            assert!(got.starts_with(message), "{json}: {got}");
        }
        let syntax = context_inputs("not json").map(|_| ()).unwrap_err();
        assert!(syntax.starts_with("context inputs: expected"), "serde_json's own message: {syntax}");
    }

    #[test]
    fn message_texts_read_whole_or_not_at_all() {
        let t = message_text(r#"{"toolName": "bash", "command": "ls", "text": null}"#).expect("a text");
        assert_eq!(t, MessageText { tool_name: Some("bash".into()), command: Some("ls".into()), text: None });
        assert_eq!(message_text("{}"), Some(MessageText::default()));
        assert_eq!(message_text(r#"{"toolName": "bash", "text": 5}"#), None);
        assert_eq!(message_text("not json"), None);
        assert_eq!(message_text("42"), None);
    }
}
