//! A chat model as the judge (issue 13): the prompt that asks it a request's
//! questions.
//!
//! For: users without a classifier (Jev) credential. The judge gets exactly
//! what a classifier gets, the request's `state` and `questions`, written for
//! a chat model ([`SYSTEM`], [`prompt`]), and answers in one strict JSON
//! object:
//!
//! ```text
//! {"answers": {"keep_whole": 0.1, "focus": {"choice": "chunk_2", "probability": 0.8}, "chunk_1": 0.05, …}}
//! ```
//!
//! a yes/no question's answer being the probability of its `true` criterion
//! (0–1), a choice's the option's id, alone (certain) or with a probability.
//! `classify::Answers::from_judge` reads that reply as a classifier's answers,
//! so the pass reads both the same way.
//!
//! Not for: asking (the extension's `guard/judge.ts` calls Pi's
//! `modelRegistry.complete`), reading the reply (`classify`) or what the
//! answers mean (`decide`, `items`, `exchange`). It knows only JSON.

use serde_json::Value;

/// The judge's system prompt.
pub const SYSTEM: &str = "You are the judge of a context guard for a coding agent. The agent's context window \
fills up with tool outputs; the guard keeps out what the agent no longer needs, and you decide what that is. \
You get the situation as a JSON object (`state`) and questions about it, each with an id. Answer every question \
from what the state shows. When unsure whether something is needed, say it is needed (a high probability): \
keeping too much costs little, removing what is needed breaks the agent's work.\n\n\
Reply with one JSON object and nothing else, no prose, no code fence:\n\
{\"answers\": {\"<id>\": <answer>, ...}}\n\
- a yes/no question: the probability, a number from 0 to 1, that the answer is yes;\n\
- a choice question: {\"choice\": \"<the id of the one option that fits best>\", \"probability\": <0 to 1, how \
sure you are>}.";

/// The user message of a request: its state (the JSON text of `state`, as
/// the extension wrote it: sent as it is) and its questions, in order, each
/// `[id, type, instructions, [[key, text], …]]` (the criteria: `true` and
/// `false` of a bool, the options of a choice); `None` when the questions are
/// not in that form. Consecutive questions (and options) that differ only by
/// their own id are written once, with the ids listed: a segment's chunk
/// questions are the same question for each chunk (~40 % of a request's
/// characters when written out one by one).
pub fn prompt(state: &str, questions: &str) -> Option<String> {
    let questions: Value = serde_json::from_str(questions).ok()?;
    let mut out = String::with_capacity(state.len() + 4096);
    out.push_str("state:\n");
    out.push_str(state);
    out.push_str("\n\nquestions:\n");
    let mut ids = String::new();
    let mut bools: Option<Line> = None;
    for q in questions.as_array()? {
        let [id, kind, instructions, criteria] = q.as_array()?.as_slice() else { return None };
        let (id, instructions) = (id.as_str()?, instructions.as_str()?);
        if !ids.is_empty() {
            ids.push_str(", ");
        }
        ids.push_str(id);
        let choice = kind.as_str()? == "choice";
        let mut text = Text::default();
        let mut options: Option<Line> = None;
        if choice {
            flush(&mut bools, &mut out, true);
            out.push_str("- ");
            out.push_str(id);
            out.push_str(" (choice: give the id of one option): ");
            out.push_str(instructions);
            out.push('\n');
        } else {
            text.add(instructions, id);
        }
        for c in criteria.as_array()? {
            let [key, criterion] = c.as_array()?.as_slice() else { return None };
            let (key, criterion) = (key.as_str()?, criterion.as_str()?);
            if choice {
                let mut option = Text::default();
                option.add(criterion, key);
                merge(&mut options, key, option, &mut out, false);
            } else {
                text.add(if key == "true" { "\n  yes: " } else { "\n  no: " }, "");
                text.add(criterion, id);
            }
        }
        if choice {
            flush(&mut options, &mut out, false);
        } else {
            merge(&mut bools, id, text, &mut out, true);
        }
    }
    flush(&mut bools, &mut out, true);
    out.push_str("\nAnswer every id: ");
    out.push_str(&ids);
    out.push_str(".\nReply with the JSON object only.");
    Some(out)
}

/// A question's (or an option's) text as written, and with its own id as `ID`.
#[derive(Default, PartialEq)]
struct Text {
    literal: String,
    generic: String,
    /// Whether the id was found (a text without it is never merged).
    named: bool,
}

impl Text {
    /// Appends `part`, whose first mention of `id` the generic text writes as `ID`.
    fn add(&mut self, part: &str, id: &str) {
        self.literal.push_str(part);
        let (p, k) = (part.as_bytes(), id.as_bytes());
        let at = (!k.is_empty() && p.len() >= k.len())
            .then(|| (0..=p.len() - k.len()).find(|&i| p.get(i..i + k.len()) == Some(k)))
            .flatten();
        match at.and_then(|i| Some((part.get(..i)?, part.get(i + k.len()..)?))) {
            Some((before, after)) => {
                self.named = true;
                self.generic.push_str(before);
                self.generic.push_str("ID");
                self.generic.push_str(after);
            }
            None => self.generic.push_str(part),
        }
    }
}

/// Ids that share one text.
struct Line {
    ids: String,
    many: bool,
    text: Text,
}

/// Adds `id`'s text to the pending line when both name their id and read the same but for it; else
/// writes the pending line and starts another.
fn merge(pending: &mut Option<Line>, id: &str, text: Text, out: &mut String, questions: bool) {
    if let Some(last) = pending {
        if text.named && last.text.named && last.text.generic == text.generic {
            last.ids.push_str(", ");
            last.ids.push_str(id);
            last.many = true;
            return;
        }
    }
    flush(pending, out, questions);
    *pending = Some(Line { ids: id.to_string(), many: false, text });
}

/// Writes the pending line, if any: a yes/no question, or a choice's option.
fn flush(pending: &mut Option<Line>, out: &mut String, questions: bool) {
    let Some(line) = pending.take() else { return };
    out.push_str(if questions { "- " } else { "  option " });
    out.push_str(&line.ids);
    if questions {
        out.push_str(if line.many { " (yes/no, one answer for each id; ID stands for that id)" } else { " (yes/no)" });
    }
    out.push_str(": ");
    out.push_str(if line.many { &line.text.generic } else { &line.text.literal });
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A segment's questions as the extension hands them over (`[id, type, instructions, criteria]`).
    fn segment_questions(chunks: usize) -> Value {
        let mut q = vec![
            json!(["keep_whole", "bool", "Is all of it needed?", [["true", "All of it"], ["false", "Some or none"]]]),
            json!(["focus", "choice", "Which part?", [["whole", "Most of it"], ["none", "Nothing"]]]),
        ];
        for i in 1..=chunks {
            let k = format!("chunk_{i}");
            q[1][3]
                .as_array_mut()
                .unwrap()
                .push(json!([k, format!("A few chunks are needed; {k} is the most important")]));
            q.push(json!([
                k,
                "bool",
                format!("Does {k} hold lines the answer relies on?"),
                [["true", format!("{k} is needed")], ["false", format!("{k} is not needed")]]
            ]));
        }
        Value::Array(q)
    }

    #[test]
    fn the_prompt_carries_the_state_and_each_question_once() {
        let state = r#"{"situation":"A run ended.","chunks":{"chunk_1":"a\n","chunk_2":"b\n"}}"#;
        let p = prompt(state, &segment_questions(12).to_string()).unwrap();
        let ids: Vec<String> = (1..=12).map(|i| format!("chunk_{i}")).collect();
        let ids = crate::text::join(&ids, ", ");
        assert_eq!(
            p,
            format!(
                "state:\n{state}\n\nquestions:\n\
                 - keep_whole (yes/no): Is all of it needed?\n  yes: All of it\n  no: Some or none\n\
                 - focus (choice: give the id of one option): Which part?\n  option whole: Most of it\n  option none: Nothing\n\
                 \x20 option {ids}: A few chunks are needed; ID is the most important\n\
                 - {ids} (yes/no, one answer for each id; ID stands for that id): Does ID hold lines the answer relies on?\n\
                 \x20 yes: ID is needed\n  no: ID is not needed\n\
                 \nAnswer every id: keep_whole, focus, {ids}.\nReply with the JSON object only."
            )
        );
        // One chunk: nothing to group, no ID.
        let p = prompt("{}", &segment_questions(1).to_string()).unwrap();
        assert!(p.contains("  option chunk_1: A few chunks are needed; chunk_1 is the most important\n"));
        assert!(
            p.contains("- chunk_1 (yes/no): Does chunk_1 hold lines the answer relies on?\n  yes: chunk_1 is needed\n")
        );
    }

    #[test]
    fn questions_that_differ_otherwise_stay_apart() {
        let questions = json!([
            ["output_1", "bool", "Is output_1 needed?", [["true", "output_1 yes"], ["false", "output_1 no"]]],
            ["output_2", "bool", "Is output_2 needed now?", [["true", "output_2 yes"], ["false", "output_2 no"]]],
            ["output_3", "bool", "Is output_3 needed now?", [["true", "output_3 yes"], ["false", "output_3 no"]]],
        ]);
        let p = prompt("{}", &questions.to_string()).unwrap();
        assert!(p.contains("- output_1 (yes/no): Is output_1 needed?\n  yes: output_1 yes\n  no: output_1 no\n"));
        assert!(p.contains("- output_2, output_3 (yes/no, one answer for each id; ID stands for that id): Is ID needed now?\n  yes: ID yes\n"));
        for bad in ["{}", "[1]", "[[\"a\", \"bool\", \"x\"]]", "[[\"a\", \"bool\", \"x\", [[\"true\"]]]]", "not json"] {
            assert_eq!(prompt("{}", bad), None, "{bad}");
        }
    }
}
