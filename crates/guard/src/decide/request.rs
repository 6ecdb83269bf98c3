//! The classifier request for one segment of a large output (docs/GUARD.md,
//! "What it judges"): its state and questions, in Pi's
//! `ClassifierContext` shape.
//!
//! The request's types (Pi's classifier types, the states) are in `classify`.

use serde_json::Value;

pub use crate::classify::chunk_key;
use crate::classify::{
    earlier, BoolCriteria, ChunkQuestions, Chunks, ClassifierContext, ClassifierQuestion, LargeState, Ordered,
    RunFields, State, Template, ARGUMENTS_MAX,
};
use crate::run::Run;
use crate::text::clip_middle;

const SITUATION: &str = "A coding agent has answered the user's question. Below is one tool output from its work, \
split into numbered chunks. Only the chunks that are kept stay visible to the agent; the others are replaced by a \
short note.";
const SITUATION_HISTORY: &str =
    " earlier_conversation shows the session so far, and the agent will likely continue it.";
const TOOL_FAILED: &str = "The call failed. Its details are usually no longer needed once the final answer shows the \
agent got past it.";

// A checkpoint's wording (the original guard's base wording: its probe beat an
// "acted" variant, which dropped files still in use).
const SITUATION_MID_RUN: &str = "A coding agent is still working on the user's question. Below is the output of one \
of its earlier tool calls, split into numbered chunks. Only the chunks that are kept stay visible to the agent; the \
others are replaced by a short note (the agent can recall them).";
const TOOL_FAILED_MID_RUN: &str = "The call failed. Its details are usually no longer needed once the agent got past \
it.";
const KEEP_WHOLE_MID_RUN: &str = "To finish user_question, will the agent still need all of this tool output? Lines \
that are out of date or that the agent has already acted on and moved past are not needed.";
const FOCUS_MID_RUN: &str = "Which part of this tool output will the agent still need to finish user_question? \
whole = most of the output is needed; none = nothing in it is needed; chunk_N = a few chunks are needed, chunk_N is \
the most important.";
/// Above this many later calls, the first and last [`LATER_CALLS_KEPT`] are sent.
pub const LATER_CALLS_MAX: usize = 30;
pub const LATER_CALLS_KEPT: usize = 15;

const KEEP_WHOLE: &str =
    "Is all of this tool output still needed for the final answer or for a likely follow-up question?";
const KEEP_WHOLE_HISTORY: &str = "Is all of this tool output still needed for the final answer, for a likely \
follow-up question, or for the user's ongoing task in earlier_conversation?";
const FOCUS: &str = "Which part of this tool output does the final answer draw on? whole = most of the output is \
needed; none = nothing in it is needed; chunk_N = a few chunks are needed, chunk_N is the most important.";

/// The chunks of one segment, with their numbers across the whole output.
#[derive(Debug, Clone, Copy)]
pub struct RequestInput<'a> {
    pub run: &'a Run,
    pub tool: &'a str,
    pub arguments: &'a Value,
    pub is_error: bool,
    /// Lines of the whole output.
    pub lines: usize,
    /// This segment is part `part` (1-based) of `parts` sent for the output.
    pub part: usize,
    pub parts: usize,
    /// 1-based number of the segment's first chunk.
    pub first_number: usize,
    pub chunk_texts: &'a [&'a str],
    /// At a checkpoint (`run.mid_run`): labels of the calls after this
    /// output, oldest first, and why one superseded it.
    pub later_calls: &'a [String],
    pub superseded: Option<&'a str>,
}

/// The later calls as a checkpoint sends them: all up to 30, else the first
/// and last 15 around one line that counts the rest.
pub fn later_tool_calls(labels: &[String]) -> Vec<String> {
    if labels.len() <= LATER_CALLS_MAX {
        return labels.to_vec();
    }
    let gap = labels.len() - 2 * LATER_CALLS_KEPT;
    let mut out: Vec<String> = labels.iter().take(LATER_CALLS_KEPT).cloned().collect();
    out.push(format!("[… {gap} more calls …]"));
    out.extend(labels.iter().skip(labels.len() - LATER_CALLS_KEPT).cloned());
    out
}

/// The classifier request for one segment of a large output.
pub fn large_request(input: &RequestInput) -> ClassifierContext {
    large_request_with(input, Chunks::of_texts(input.first_number, input.chunk_texts))
}

/// [`large_request`] with the segment's chunks given as ranges of a shared
/// text (the plan's way) instead of `input.chunk_texts` (not read).
pub fn large_request_with(input: &RequestInput, chunks: Chunks) -> ClassifierContext {
    let earlier_conversation = earlier(&input.run.history);
    let with_history = earlier_conversation.is_some();
    let mid_run = input.run.mid_run;
    let mut situation = (if mid_run { SITUATION_MID_RUN } else { SITUATION }).to_string();
    if with_history {
        situation.push_str(SITUATION_HISTORY);
    }
    let arguments = match input.arguments {
        Value::Null => "{}".to_string(),
        a => serde_json::to_string(a).unwrap_or_default(),
    };
    let lines = if input.lines == 1 { "1 line".to_string() } else { format!("{} lines", input.lines) };
    let output_size = if input.parts > 1 { format!("{lines}, part {} of {}", input.part, input.parts) } else { lines };
    let (first, count) = (chunks.first, chunks.ranges.len());
    let state = LargeState {
        run: RunFields::new(situation, earlier_conversation, input.run),
        later_tool_calls: mid_run.then(|| later_tool_calls(input.later_calls)),
        superseded: input.superseded.filter(|_| mid_run).map(str::to_string),
        tool: input.tool.to_string(),
        tool_arguments: clip_middle(&arguments, ARGUMENTS_MAX),
        tool_status: input.is_error.then(|| (if mid_run { TOOL_FAILED_MID_RUN } else { TOOL_FAILED }).to_string()),
        output_size,
        chunks,
    };

    let questions = vec![
        (
            "keep_whole".to_string(),
            ClassifierQuestion::Bool {
                instructions: (if mid_run {
                    KEEP_WHOLE_MID_RUN
                } else if with_history {
                    KEEP_WHOLE_HISTORY
                } else {
                    KEEP_WHOLE
                })
                .to_string(),
                criteria: BoolCriteria {
                    yes: "All of the output is still needed".to_string(),
                    no: "Only some chunks, or none, are needed".to_string(),
                },
            },
        ),
        (
            // Its options go on with one per chunk (`option` below).
            "focus".to_string(),
            ClassifierQuestion::Choice {
                instructions: (if mid_run { FOCUS_MID_RUN } else { FOCUS }).to_string(),
                criteria: Ordered(vec![
                    ("whole".to_string(), "Most of the output is needed".to_string()),
                    ("none".to_string(), "Nothing in the output is needed".to_string()),
                ]),
            },
        ),
    ];
    // Each chunk's question, worded around its key (`chunk_N`).
    let (instructions, yes) = if mid_run {
        (
            Template::new(
                "To finish user_question, will the agent still need the lines in ",
                "? Lines that are out of date or that the agent has already acted on and moved past are not needed.",
            ),
            Template::new("", " is still needed"),
        )
    } else {
        let mut after =
            " hold lines the final answer relies on, or that a likely follow-up question would need".to_string();
        if with_history {
            after.push_str(
                ", or that the user's ongoing task in earlier_conversation will need, even if the current question \
                 is about something else",
            );
        }
        after.push('?');
        (Template { before: "Does ".to_string(), after }, Template::new("", " is needed"))
    };
    let chunk_questions = ChunkQuestions {
        first,
        count,
        option: Template::new("A few chunks are needed; ", " is the most important"),
        instructions,
        yes,
        no: Template::new("", " is not needed"),
    };
    ClassifierContext {
        state: State::Large(state),
        questions: Ordered(questions),
        chunk_questions: Some(chunk_questions),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::QUESTION_MAX;
    use crate::run::Exchange;
    use crate::text::js_len;
    use serde_json::json;

    fn run() -> Run {
        Run {
            question: "where is status handled?".into(),
            answer: "In src/status.ts.".into(),
            notes: "Searching.".into(),
            ..Run::default()
        }
    }

    #[test]
    fn the_request_has_the_state_and_questions_of_the_guard() {
        let r = run();
        let texts = ["a:1:x", "b:2:y"];
        let args = json!({"command": "rg -n status"});
        let input = RequestInput {
            run: &r,
            tool: "bash",
            arguments: &args,
            is_error: false,
            lines: 410,
            part: 2,
            parts: 3,
            first_number: 41,
            chunk_texts: &texts,
            later_calls: &[],
            superseded: None,
        };
        let v = serde_json::to_value(large_request(&input)).unwrap();
        let state = v["state"].as_object().unwrap();
        let keys: Vec<&str> = state.keys().map(String::as_str).collect();
        let mut expected = vec![
            "agent_notes_during_the_run",
            "chunks",
            "final_answer",
            "output_size",
            "situation",
            "tool",
            "tool_arguments",
            "user_question",
        ];
        expected.sort();
        assert_eq!(keys, expected);
        assert_eq!(state["output_size"], "410 lines, part 2 of 3");
        assert_eq!(state["tool_arguments"], r#"{"command":"rg -n status"}"#);
        assert_eq!(state["chunks"]["chunk_42"], "b:2:y");
        assert!(!state["situation"].as_str().unwrap().contains("earlier_conversation"));
        let q = &v["questions"];
        assert_eq!(q["keep_whole"]["type"], "bool");
        assert_eq!(q["focus"]["type"], "choice");
        let options: Vec<&String> = q["focus"]["criteria"].as_object().unwrap().keys().collect();
        assert_eq!(options.len(), 4);
        assert!(q["focus"]["criteria"]["chunk_41"].is_string());
        assert_eq!(q["chunk_41"]["criteria"]["true"], "chunk_41 is needed");
        assert!(!q["chunk_41"]["instructions"].as_str().unwrap().contains("earlier_conversation"));

        // Field order and chunk order as serialized.
        let text = serde_json::to_string(&large_request(&input)).unwrap();
        let order = [
            "situation",
            "user_question",
            "final_answer",
            "agent_notes_during_the_run",
            "tool\"",
            "output_size",
            "chunks",
        ];
        let at: Vec<usize> = order.iter().map(|k| text.find(&format!("\"{k}")).unwrap()).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
        assert!(text.find("\"chunk_41\"").unwrap() < text.find("\"chunk_42\"").unwrap());
    }

    #[test]
    fn history_errors_and_clipping_in_the_request() {
        let mut r = run();
        r.question = "q".repeat(10_000);
        r.notes = "  ".into();
        r.history.exchanges.push(Exchange { user: "before".into(), assistant: "did".into() });
        let input = RequestInput {
            run: &r,
            tool: "bash",
            arguments: &Value::Null,
            is_error: true,
            lines: 1,
            part: 1,
            parts: 1,
            first_number: 1,
            chunk_texts: &["x"],
            later_calls: &[],
            superseded: None,
        };
        let v = serde_json::to_value(large_request(&input)).unwrap();
        let st = &v["state"];
        assert_eq!(js_len(st["user_question"].as_str().unwrap()), QUESTION_MAX);
        assert!(st.get("agent_notes_during_the_run").is_none());
        assert!(st["tool_status"].as_str().unwrap().contains("failed"));
        assert_eq!(st["output_size"], "1 line");
        assert_eq!(st["tool_arguments"], "{}");
        assert_eq!(st["earlier_conversation"], json!({"recent_exchanges": [{"user": "before", "assistant": "did"}]}));
        assert!(st["situation"].as_str().unwrap().contains("earlier_conversation"));
        assert!(v["questions"]["chunk_1"]["instructions"].as_str().unwrap().contains("even if the current question"));
    }
}
