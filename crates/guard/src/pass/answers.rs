//! The runner's answers read straight from their JSON text.
//!
//! For: `finish_json`. A checkpoint's answers are thousands of small objects
//! (`{"type": "bool", "probability": 0.9}` per chunk); read into a
//! `serde_json::Value`, each is a map, two keys and a type string, and those
//! allocations and their release were about half of `finish_json`'s time.
//! Here each answer's fields are found by a scanner and only the ones
//! `ClassifierAnswer::from_fields` reads become values; everything else in
//! the outcomes and the top object is read as values by the same
//! `from_value`s as before. A scanner rather than serde visitors: each
//! visitor type is another copy of serde_json's parser in the wasm.
//!
//! Not for: any JSON the extension does not send. The scanner takes only the
//! shapes `JSON.stringify` of `PassAnswers` writes (objects and the outcomes
//! list where it writes them, no field of an answer given twice); anything
//! else is `None` and the caller reads the whole text through a `Value`, so
//! the result is always what that reading gives, and invalid JSON is refused
//! there as before.

use serde_json::{Map, Value};

use crate::classify::{AnswerFields, Answers, ClassifierAnswer, RequestOutcome};

use super::PassAnswers;

/// `PassAnswers` from the runner's JSON, or `None` (read it through a `Value`).
pub fn read(text: &str) -> Option<PassAnswers> {
    let mut s = Scan { text, at: 0 };
    let mut outcomes = None;
    let fields = s.fields("outcomes", &mut |s| {
        let mut list = Vec::new();
        s.array(&mut |s| {
            list.push(s.outcome()?);
            Some(())
        })?;
        outcomes = Some(list);
        Some(())
    })?;
    s.space();
    if s.at != text.len() {
        return None;
    }
    let mut out = PassAnswers::from_value(fields);
    out.outcomes = outcomes?;
    Some(out)
}

/// A position in the text.
struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        self.space();
        (self.peek() == Some(b)).then(|| self.at += 1)
    }

    /// An object's members: `member` reads each value after its key. Keys
    /// with an escape are refused (the extension's keys have none). `dyn`:
    /// one copy in the wasm.
    fn object(&mut self, member: &mut dyn FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            self.eat(b'"')?;
            let start = self.at;
            let len = self.text.get(start..)?.bytes().position(|b| b == b'"' || b == b'\\' || b < 0x20)?;
            self.at = start + len;
            if self.peek() != Some(b'"') {
                return None;
            }
            let key = self.text.get(start..self.at)?;
            self.at += 1;
            self.eat(b':')?;
            member(self, key)?;
            self.space();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, item: &mut dyn FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.eat(b']').is_some() {
            return Some(());
        }
        loop {
            item(self)?;
            self.space();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The next value, read by serde_json (which checks it) from its extent.
    #[inline(never)]
    fn value(&mut self) -> Option<Value> {
        self.space();
        let start = self.at;
        self.skip(0)?;
        serde_json::from_str(self.text.get(start..self.at)?).ok()
    }

    /// Past the next value, finding its extent only (what is in it is
    /// checked where it is read: by `value`, or by `skip_checked`).
    fn skip(&mut self, depth: usize) -> Option<()> {
        if depth > 64 {
            return None;
        }
        self.space();
        match self.peek()? {
            b'"' => {
                self.at += 1;
                loop {
                    let rest = self.text.as_bytes().get(self.at..)?;
                    let i = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
                    self.at += i + 1;
                    if rest.get(i) == Some(&b'"') {
                        return Some(());
                    }
                    self.at += 1; // the escaped character
                }
            }
            b'{' => self.object(&mut |s, _| s.skip(depth + 1)),
            b'[' => self.array(&mut |s| s.skip(depth + 1)),
            _ => {
                let rest = self.text.as_bytes().get(self.at..)?;
                let len = rest.iter().position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'));
                self.at += len.unwrap_or(rest.len());
                Some(())
            }
        }
    }

    /// Past the next value, checked by serde_json without keeping it.
    fn skip_checked(&mut self) -> Option<()> {
        self.value().map(drop)
    }

    /// An object's fields as values, but `special`'s, which `read` reads.
    fn fields(&mut self, special: &str, read: &mut dyn FnMut(&mut Self) -> Option<()>) -> Option<Value> {
        let mut fields = Map::new();
        self.object(&mut |s, key| {
            if key == special {
                return read(s);
            }
            fields.insert(key.to_string(), s.value()?);
            Some(())
        })?;
        Some(Value::Object(fields))
    }

    /// One outcome: its answers read here, the rest by `RequestOutcome::from_value`.
    fn outcome(&mut self) -> Option<RequestOutcome> {
        let mut answers = Answers::default();
        let fields = self.fields("answers", &mut |s| {
            answers = s.answers()?;
            Some(())
        })?;
        // Only a classifier's answers are scanned; a judge's reply (`replied`) is
        // read from its text by `from_value`.
        let answered = fields.get("status").and_then(Value::as_str) == Some("answered");
        Some(match RequestOutcome::from_value(fields) {
            RequestOutcome::Answered { input_tokens, cost_usd, .. } if answered => {
                RequestOutcome::Answered { answers, input_tokens, cost_usd }
            }
            other => other,
        })
    }

    fn answers(&mut self) -> Option<Answers> {
        let mut out = Vec::new();
        self.object(&mut |s, key| {
            out.push((key.to_string(), s.answer()?));
            Some(())
        })?;
        Some(Answers::new(out))
    }

    /// One answer: the fields `from_fields` reads as values, the others checked and dropped.
    fn answer(&mut self) -> Option<Option<ClassifierAnswer>> {
        const NAMES: [&str; 5] = ["choice", "probabilities", "confidence", "probability", "score"];
        let mut f: [Option<Value>; 5] = Default::default();
        self.object(&mut |s, key| {
            let Some(slot) = NAMES.iter().position(|n| *n == key).and_then(|i| f.get_mut(i)) else {
                return s.skip_type_or_checked(key);
            };
            if slot.is_some() {
                return None;
            }
            *slot = Some(s.value()?);
            Some(())
        })?;
        let [choice, probabilities, confidence, probability, score] = &f;
        Some(ClassifierAnswer::from_fields(&AnswerFields {
            choice: choice.as_ref(),
            probabilities: probabilities.as_ref(),
            confidence: confidence.as_ref(),
            probability: probability.as_ref(),
            score: score.as_ref(),
        }))
    }

    /// An answer's `type` (`"bool"`, `"choice"`, `"score"`) is passed over
    /// without a value; anything else is checked by serde_json.
    fn skip_type_or_checked(&mut self, key: &str) -> Option<()> {
        if key == "type" {
            self.space();
            for t in ["\"bool\"", "\"choice\"", "\"score\""] {
                if self.text.get(self.at..)?.starts_with(t) {
                    self.at += t.len();
                    return Some(());
                }
            }
        }
        self.skip_checked()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `finish` reads of answers: each outcome's kind, usage and answer by key, sorted.
    fn seen(a: &PassAnswers) -> (Vec<String>, bool, f64) {
        let outcome = |o: &RequestOutcome| match o {
            RequestOutcome::Answered { answers, input_tokens, cost_usd } => {
                let mut keys: Vec<&String> = answers.entries().iter().map(|(k, _)| k).collect();
                keys.sort();
                keys.dedup();
                let by_key: Vec<String> = keys.iter().map(|k| format!("{k}={:?}", answers.get(k))).collect();
                format!("answered {input_tokens} {cost_usd} {by_key:?}")
            }
            o => format!("{o:?}"),
        };
        (a.outcomes.iter().map(outcome).collect(), a.timed_out, a.ms)
    }

    #[test]
    fn answers_keep_a_keys_last_answer_and_are_found_in_any_order() {
        let b = |p: f64| Some(ClassifierAnswer::Bool { probability: p });
        let a =
            Answers::new(vec![("x".into(), b(0.1)), ("y".into(), b(0.2)), ("z".into(), None), ("x".into(), b(0.3))]);
        let keys: Vec<&str> = a.entries().iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["y", "z", "x"]);
        for (key, p) in [("x", b(0.3)), ("y", b(0.2)), ("y", b(0.2)), ("z", None), ("w", None), ("x", b(0.3))] {
            assert_eq!(a.get(key).cloned(), p, "{key}");
        }
    }

    #[test]
    fn answers_read_here_as_through_a_value() {
        let through_value = |t: &str| serde_json::from_str::<PassAnswers>(t).unwrap();
        let same = [
            r#"{"outcomes":[{"status":"answered","answers":{"keep_whole":{"type":"bool","probability":0.1},
               "focus":{"type":"choice","choice":"chunk_2","probabilities":{"chunk_2":0.7,"none":0.2},"confidence":0.7},
               "chunk_1":{"type":"bool","probability":0.9},"chunk_2":{"probability":1}},"inputTokens":8000,"costUsd":0.0001},
               {"status":"error","message":"bo\"om"},{"status":"error"},{"status":"timeout","extra":[1,{"a":null},"]}"]},
               {"status":"weird","message":null}],"timedOut":true,"ms":900,"other":{}}"#,
            // A key given twice counts as its last answer; invalid answers read as none.
            r#" { "outcomes" : [ { "status" : "answered" , "answers" : { "a" : {"probability":0.1}, "b":{"probability":2},
               "a":{"probability":0.9}, "c":{"choice":3}, "d":{"probability":null}, "e":{"score":4,"confidence":0.5},
               "f":{"choice":"x","confidence":null}, "g":{"choice":"x","probabilities":{"x":0.4}}, "h":{"type":"bool"},
               "i":{"type":"other","probability":0.2,"note":[true]}, "j":{"type":"bool","probability":1e-1} } } ],
               "timedOut":false, "ms":1.5 } "#,
            r#"{"outcomes":[],"timedOut":false,"ms":0}"#,
            // A judge's reply, read from its text; one that is not the JSON asked for answers nothing.
            r#"{"outcomes":[{"status":"replied","text":"```json\n{\"answers\":{\"keep_whole\":0.2,\"focus\":\"none\"}}\n```",
               "inputTokens":900,"costUsd":0.002},{"status":"replied","text":"I cannot help.","inputTokens":40,"costUsd":0.0001},
               {"status":"replied","answers":{"a":{"probability":0.1}}}],"timedOut":false,"ms":3}"#,
            // Odd fields besides the answers read as `from_value` reads them.
            r#"{"outcomes":[{"answers":{}},{"status":"error","message":7},{"status":"answered","inputTokens":null}],"ms":null,"timedOut":1}"#,
        ];
        for t in same {
            let fast = read(t).unwrap_or_else(|| panic!("not read here: {t}"));
            assert_eq!(seen(&fast), seen(&through_value(t)), "{t}");
        }
        let judged = read(same[3]).unwrap().outcomes;
        assert_eq!(judged[0].answer("keep_whole"), Some(ClassifierAnswer::Bool { probability: 0.2 }));
        assert_eq!((judged[0].usage(), judged[1].usage()), ((900.0, 0.002), (40.0, 0.0001)));
        assert_eq!((judged[1].answer("keep_whole"), judged[2].answer("a")), (None, None));
        // Shapes the extension never sends: left to the value (finish_json reads them so).
        let odd = [
            "[1]",
            "5",
            "{}",
            r#"{"outcomes":{}}"#,
            r#"{"outcomes":[3]}"#,
            r#"{"outcomes":[],"ms":1}x"#,
            r#"{"\u006futcomes":[]}"#,
            r#"{"outcomes":[{"status":"answered","answers":[1]}]}"#,
            r#"{"outcomes":[{"status":"answered","answers":{"a":5}}]}"#,
            r#"{"outcomes":[{"status":"answered","answers":{"a\u0062":{"probability":0.1}}}]}"#,
            r#"{"outcomes":[{"status":"answered","answers":{"a":{"probability":0.1,"probability":0.9}}}]}"#,
        ];
        for t in odd {
            assert!(read(t).is_none(), "{t}");
        }
        // Invalid JSON is never read here.
        for t in [
            r#"{"outcomes":[{"status":"answered","answers":{"a":{"type":bool,"probability":0.1}}}]}"#,
            r#"{"outcomes":[{"status":"answered","answers":{"a":{"type":"bool","probability":0.1,}}}]}"#,
            r#"{"outcomes":[{"status":"answered","answers":{"a":{"x":tru,"probability":0.1}}}]}"#,
            r#"{"outcomes":[{"status":"answered","answers":{"a":{"probability":01}}}]}"#,
            r#"{"outcomes":[],"ms":1,}"#,
            r#"{"outcomes":[{"status":"answered","answers":{"a":{"type":"bool""probability":0.1}}}]}"#,
            "{\"outcomes\":[{\"status\":\"answ\nered\"}]}",
        ] {
            assert!(read(t).is_none(), "{t}");
            assert!(serde_json::from_str::<PassAnswers>(t).is_err(), "{t}");
        }
    }
}
