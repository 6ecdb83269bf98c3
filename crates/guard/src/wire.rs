//! Writing the pass's big JSON fast: the classifier requests and the pass
//! state, which carry a megabyte of tool output.
//!
//! For: the boundary of the run-end pass (its budget: ≤ 15 ms of the pass's
//! own work for 1 MB). Measured in wasm, serde_json's string
//! escaping (a table lookup per byte, not unrolled at `opt-level = "z"`) was
//! the largest single cost of a pass. Here strings are escaped eight bytes at
//! a time, and the pass state carries its output texts raw after a JSON
//! header, so they are neither escaped nor unescaped. Not for: anything
//! small; the rest of the core uses serde_json. The output is byte for byte
//! what serde_json writes (tested).

use crate::classify::{
    push_chunk_key, ChunkQuestions, ClassifierContext, ClassifierQuestion, ExchangeState, LargeState, RunFields,
    SmallState, State, Template,
};
use crate::json_text::push_str;
use crate::outcome::{Draft, Outcome, TextRange};
use crate::text::push_usize;

/// A text as a JSON string, or, when parts of it are ranges of out-of-line
/// texts, as an array of its parts: the strings between, and `[k, from, to]`
/// for each range (see `pass::finish_json`).
fn text_parts(out: &mut String, text: &str, ranges: &[TextRange]) {
    if ranges.is_empty() {
        return push_str(out, text);
    }
    out.push('[');
    let mut at = 0;
    for r in ranges {
        let Some(between) = text.get(at..r.start).filter(|_| r.end >= r.start && text.is_char_boundary(r.end)) else {
            continue;
        };
        if !between.is_empty() {
            push_str(out, between);
            out.push(',');
        }
        for (j, n) in [r.source, r.from, r.to].into_iter().enumerate() {
            out.push(if j == 0 { '[' } else { ',' });
            push_usize(out, n);
        }
        out.push_str("],");
        at = r.end;
    }
    push_str(out, text.get(at..).unwrap_or(""));
    out.push(']');
}

/// A small writer for JSON objects in a fixed field order.
struct Obj<'a> {
    out: &'a mut String,
    first: bool,
    /// Keys written so far.
    keys: usize,
}

impl<'a> Obj<'a> {
    fn new(out: &'a mut String) -> Obj<'a> {
        out.push('{');
        Obj { out, first: true, keys: 0 }
    }
    fn key(&mut self, k: &str) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.keys += 1;
        push_str(self.out, k);
        self.out.push(':');
        self.out
    }
    fn str(&mut self, k: &str, v: &str) {
        let out = self.key(k);
        push_str(out, v);
    }
    fn opt(&mut self, k: &str, v: &Option<String>) {
        if let Some(v) = v {
            self.str(k, v);
        }
    }
    fn end(self) {
        self.out.push('}');
    }
}

/// Where the chunks of a request are found in the out-of-line texts: the
/// text's index and each chunk's range in UTF-16 units.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChunkRefs {
    pub text: usize,
    pub ranges: Vec<(usize, usize)>,
}

/// The JSON text of the requests, as serde_json would write it, except that
/// the chunks of a request with `refs` are written as `[text, start, end]`
/// (see `pass::plan_json`).
pub fn requests(requests: &[ClassifierContext], refs: &[Option<ChunkRefs>]) -> String {
    write_requests(requests, refs, false)
}

/// [`requests`] with each request's chunk questions as their wording (see
/// `pass::plan_json`): `questions` holds the questions asked once, its choice
/// without the chunks' options, and `chunkQuestions` beside it the
/// [`ChunkQuestions`]' templates, each `[before, after]` around a chunk's key:
///
/// `"chunkQuestions":{"option":[…],"instructions":[…],"true":[…],"false":[…]}`
///
/// Written out for each key of the state's `chunks`, in order, they give the
/// requests [`requests`] writes: the choice's criteria go on with
/// `{key: option}`, and after the other questions come
/// `{key: {"type": "bool", "instructions", "criteria": {"true", "false"}}}`.
///
/// A request whose questions and chunk questions' wording are those of the
/// last request sent with its own, request `j`, has `"questionsOf":j` in
/// their place.
///
/// And a large state whose head (every field before `output_size`: the
/// run's, and the output's, the same in each of its segments) is that of the
/// last large state written in full, request `j`'s with `n` such fields,
/// starts with `"head":[j,n]` in their place: its fields are then the first
/// `n` of request `j`'s state, followed by its own.
pub fn requests_compact(requests: &[ClassifierContext], refs: &[Option<ChunkRefs>]) -> String {
    write_requests(requests, refs, true)
}

fn write_requests(requests: &[ClassifierContext], refs: &[Option<ChunkRefs>], compact: bool) -> String {
    let size: usize = requests
        .iter()
        .enumerate()
        .map(|(i, r)| match (refs.get(i), compact) {
            (Some(Some(_)), true) => 4096,
            (Some(Some(r)), false) => 4096 + r.ranges.len() * 400,
            _ => approximate_size(r),
        })
        .sum();
    let mut out = String::with_capacity(size + size / 16 + 64);
    out.push('[');
    // The last large state written in full: its request, its head's fields, the state.
    let mut last: Option<(usize, usize, &LargeState)> = None;
    // The last chunk questions written as their wording: the request.
    let mut last_questions: Option<(usize, &ClassifierContext)> = None;
    for (i, r) in requests.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let head = match (&r.state, last) {
            (State::Large(s), Some((j, n, l))) if compact && same_head(s, l) => Some((j, n)),
            _ => None,
        };
        let questions_of = match last_questions {
            Some((j, l)) if compact && same_questions(r, l) => Some(j),
            _ => None,
        };
        let fields = request(&mut out, r, refs.get(i).and_then(Option::as_ref), compact, head, questions_of);
        if let (State::Large(s), None) = (&r.state, head) {
            last = Some((i, fields, s));
        }
        if r.chunk_questions.is_some() && questions_of.is_none() {
            last_questions = Some((i, r));
        }
    }
    out.push(']');
    out
}

fn approximate_size(r: &ClassifierContext) -> usize {
    match &r.state {
        State::Large(s) => s.chunks.texts().map(|t| t.len() + 420).sum::<usize>() + 4096,
        _ => 16 * 1024,
    }
}

/// Writes a request; returns how many fields its large state's own head has (0 for other kinds).
fn request(
    out: &mut String,
    r: &ClassifierContext,
    refs: Option<&ChunkRefs>,
    compact: bool,
    head: Option<(usize, usize)>,
    questions_of: Option<usize>,
) -> usize {
    let mut o = Obj::new(out);
    let fields = match &r.state {
        State::Large(s) => large_state(o.key("state"), s, refs, head),
        State::Small(s) => {
            small_state(o.key("state"), s);
            0
        }
        State::Exchange(s) => {
            exchange_state(o.key("state"), s);
            0
        }
    };
    if let Some(j) = questions_of {
        push_usize(o.key("questionsOf"), j);
        o.end();
        return fields;
    }
    // Written out here unless sent as their wording.
    let per_chunk = r.chunk_questions.as_ref().filter(|_| !compact);
    let q = o.key("questions");
    let mut qs = Obj::new(q);
    for (k, question) in &r.questions.0 {
        let out = qs.key(k);
        let mut qo = Obj::new(out);
        match question {
            ClassifierQuestion::Choice { instructions, criteria } => {
                qo.str("type", "choice");
                qo.str("instructions", instructions);
                let mut c = Obj::new(qo.key("criteria"));
                for (k, v) in &criteria.0 {
                    c.str(k, v);
                }
                if let Some(per) = per_chunk {
                    for key in per.keys() {
                        template(c.key(&key), &per.option, &key);
                    }
                }
                c.end();
            }
            ClassifierQuestion::Score { instructions, criteria } => {
                qo.str("type", "score");
                qo.str("instructions", instructions);
                str_list(qo.key("criteria"), criteria);
            }
            ClassifierQuestion::Bool { instructions, criteria } => {
                qo.str("type", "bool");
                qo.str("instructions", instructions);
                let mut c = Obj::new(qo.key("criteria"));
                c.str("true", &criteria.yes);
                c.str("false", &criteria.no);
                c.end();
            }
        }
        qo.end();
    }
    if let Some(per) = per_chunk {
        for key in per.keys() {
            let mut qo = Obj::new(qs.key(&key));
            qo.str("type", "bool");
            template(qo.key("instructions"), &per.instructions, &key);
            let mut c = Obj::new(qo.key("criteria"));
            template(c.key("true"), &per.yes, &key);
            template(c.key("false"), &per.no, &key);
            c.end();
            qo.end();
        }
    }
    qs.end();
    if let Some(per) = r.chunk_questions.as_ref().filter(|_| compact) {
        chunk_questions(o.key("chunkQuestions"), per);
    }
    o.end();
    fields
}

/// A template written out for `key`, as a JSON string.
fn template(out: &mut String, t: &Template, key: &str) {
    push_str(out, &t.with(key));
}

/// The chunk questions' wording, each template as `[before, after]`.
fn chunk_questions(out: &mut String, per: &ChunkQuestions) {
    let mut o = Obj::new(out);
    for (k, t) in [("option", &per.option), ("instructions", &per.instructions), ("true", &per.yes), ("false", &per.no)]
    {
        let out = o.key(k);
        out.push('[');
        push_str(out, &t.before);
        out.push(',');
        push_str(out, &t.after);
        out.push(']');
    }
    o.end();
}

/// The fields every request's state starts with: the situation, the
/// session before the run, the question, the answer and the notes.
fn run_fields(o: &mut Obj, run: &RunFields) {
    o.str("situation", &run.situation);
    if let Some(e) = &run.earlier_conversation {
        let mut eo = Obj::new(o.key("earlier_conversation"));
        eo.opt("summary", &e.summary);
        eo.opt("first_request", &e.first_request);
        if !e.recent_exchanges.is_empty() {
            let out = eo.key("recent_exchanges");
            out.push('[');
            for (i, x) in e.recent_exchanges.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let mut xo = Obj::new(out);
                xo.str("user", &x.user);
                xo.str("assistant", &x.assistant);
                xo.end();
            }
            out.push(']');
        }
        eo.end();
    }
    o.str("user_question", &run.user_question);
    o.opt("final_answer", &run.final_answer);
    o.opt("agent_notes_during_the_run", &run.agent_notes_during_the_run);
    if let Some(p) = &run.agent_progress {
        let mut po = Obj::new(o.key("agent_progress"));
        po.str("latest_note", &p.latest_note);
        po.opt("earlier_notes", &p.earlier_notes);
        po.end();
    }
}

/// A JSON array of strings.
fn str_list(out: &mut String, items: &[String]) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_str(out, item);
    }
    out.push(']');
}

fn small_state(out: &mut String, s: &SmallState) {
    let mut o = Obj::new(out);
    run_fields(&mut o, &s.run);
    let mut items = Obj::new(o.key("outputs"));
    for (k, item) in &s.outputs.0 {
        let mut io = Obj::new(items.key(k));
        io.str("tool", &item.tool);
        io.opt("status", &item.status);
        io.opt("superseded", &item.superseded);
        io.str("output", &item.output);
        io.end();
    }
    items.end();
    o.end();
}

fn exchange_state(out: &mut String, s: &ExchangeState) {
    let mut o = Obj::new(out);
    run_fields(&mut o, &s.run);
    let mut items = Obj::new(o.key("exchanges"));
    for (k, item) in &s.exchanges.0 {
        let mut io = Obj::new(items.key(k));
        io.str("user", &item.user);
        io.str("assistant", &item.assistant);
        if !item.tool_calls.is_empty() {
            str_list(io.key("tool_calls"), &item.tool_calls);
        }
        io.str("size", &item.size);
        io.end();
    }
    items.end();
    o.end();
}

/// Whether two requests ask the same: the same questions, and chunk
/// questions of the same wording (for other chunks).
fn same_questions(a: &ClassifierContext, b: &ClassifierContext) -> bool {
    match (&a.chunk_questions, &b.chunk_questions) {
        (Some(x), Some(y)) => {
            x.option == y.option
                && x.instructions == y.instructions
                && x.yes == y.yes
                && x.no == y.no
                && a.questions == b.questions
        }
        _ => false,
    }
}

/// Whether two large states have the same head: every field before
/// `output_size` (the run's, and the output's, the same in each of its segments).
fn same_head(a: &LargeState, b: &LargeState) -> bool {
    a.tool == b.tool
        && a.tool_arguments == b.tool_arguments
        && a.tool_status == b.tool_status
        && a.superseded == b.superseded
        && a.later_tool_calls == b.later_tool_calls
        && a.run == b.run
}

/// Writes a large state; `head` is `Some((j, n))` when its head is that of
/// request `j`'s state, whose first `n` fields it is: then written as
/// `"head":[j,n]` (see [`requests_compact`]). Returns how many fields its own
/// head has.
fn large_state(out: &mut String, s: &LargeState, refs: Option<&ChunkRefs>, head: Option<(usize, usize)>) -> usize {
    let mut o = Obj::new(out);
    let fields = match head {
        Some((j, n)) => {
            let out = o.key("head");
            out.push('[');
            push_usize(out, j);
            out.push(',');
            push_usize(out, n);
            out.push(']');
            n
        }
        None => {
            run_fields(&mut o, &s.run);
            if let Some(calls) = &s.later_tool_calls {
                str_list(o.key("later_tool_calls"), calls);
            }
            o.opt("superseded", &s.superseded);
            o.str("tool", &s.tool);
            o.str("tool_arguments", &s.tool_arguments);
            o.opt("tool_status", &s.tool_status);
            o.keys
        }
    };
    o.str("output_size", &s.output_size);
    let mut co = Obj::new(o.key("chunks"));
    let mut k = String::new();
    for (i, v) in s.chunks.texts().enumerate() {
        k.clear();
        push_chunk_key(&mut k, s.chunks.first.saturating_add(i));
        match refs.and_then(|r| Some((r.text, *r.ranges.get(i)?))) {
            Some((text, (start, end))) => {
                let out = co.key(&k);
                for (j, n) in [text, start, end].into_iter().enumerate() {
                    out.push(if j == 0 { '[' } else { ',' });
                    push_usize(out, n);
                }
                out.push(']');
            }
            None => co.str(&k, v),
        }
    }
    co.end();
    o.end();
    fields
}

/// The JSON text of a pass's outcome, as serde_json would write it: the
/// replacement texts (up to a megabyte) through [`push_str`], the record
/// (small) through serde_json.
pub fn outcome(o: &Outcome) -> Result<String, String> {
    let record = |r| serde_json::to_string(r).map_err(|e| format!("pass record: {e}"));
    let mut out = String::with_capacity(
        o.entries
            .iter()
            .map(|d| match d {
                Draft::ContextEdit { replacement: Some(replacement), .. } => {
                    replacement.content.iter().map(|b| b.text.len() + 64).sum()
                }
                Draft::ContextEdit { replacement: None, .. } => 64,
                Draft::Custom { .. } => 1024,
            })
            .sum::<usize>()
            + 1024,
    );
    let mut obj = Obj::new(&mut out);
    let list = obj.key("entries");
    list.push('[');
    for (i, d) in o.entries.iter().enumerate() {
        if i > 0 {
            list.push(',');
        }
        let mut e = Obj::new(list);
        match d {
            Draft::ContextEdit { target_id, replacement } => {
                e.str("type", "context_edit");
                e.str("targetId", target_id);
                let Some(replacement) = replacement else {
                    e.key("replacement").push_str("null");
                    e.end();
                    continue;
                };
                let mut r = Obj::new(e.key("replacement"));
                let content = r.key("content");
                content.push('[');
                for (j, b) in replacement.content.iter().enumerate() {
                    if j > 0 {
                        content.push(',');
                    }
                    let mut bo = Obj::new(content);
                    bo.str("type", b.kind);
                    text_parts(bo.key("text"), &b.text, &b.ranges);
                    bo.end();
                }
                content.push(']');
                r.end();
            }
            Draft::Custom { custom_type, data } => {
                e.str("type", "custom");
                e.str("customType", custom_type);
                let text = record(data)?;
                e.key("data").push_str(&text);
            }
        }
        e.end();
    }
    list.push(']');
    let text = match &o.record {
        Some(r) => record(r)?,
        None => "null".to_string(),
    };
    obj.key("record").push_str(&text);
    push_usize(obj.key("savedChars"), o.saved_chars);
    let decisions = serde_json::to_string(&o.break_even).map_err(|e| format!("pass break-even: {e}"))?;
    obj.key("breakEven").push_str(&decisions);
    if o.carry {
        obj.key("carry").push_str("true");
    }
    obj.end();
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::Value;

    /// The requests of [`requests_compact`] written out as `extension/guard/wasm.ts` does.
    pub(crate) fn written_out(text: &str) -> Value {
        let mut v: Value = serde_json::from_str(text).unwrap();
        // Heads first, from states written in full (the keys sort here: the head is every key but the last two).
        let sent = v.clone();
        for r in v.as_array_mut().unwrap() {
            let Some(j) = r.as_object_mut().unwrap().remove("questionsOf") else { continue };
            let base = &sent[j.as_u64().unwrap() as usize];
            assert!(base.get("questionsOf").is_none(), "questionsOf refers to a request with its own");
            r["questions"] = base["questions"].clone();
            r["chunkQuestions"] = base["chunkQuestions"].clone();
        }
        let states: Vec<Value> = v.as_array().unwrap().iter().map(|r| r["state"].clone()).collect();
        for r in v.as_array_mut().unwrap() {
            let Some(head) = r["state"].as_object_mut().unwrap().remove("head") else { continue };
            let (j, n) = (head[0].as_u64().unwrap() as usize, head[1].as_u64().unwrap() as usize);
            let base = states[j].as_object().unwrap();
            assert!(base.get("head").is_none(), "a head refers to a state written in full");
            let own: Vec<&String> = base.keys().filter(|k| *k != "output_size" && *k != "chunks").collect();
            assert_eq!(own.len(), n, "the head is every field before output_size");
            for k in own {
                r["state"][k] = base[k].clone();
            }
        }
        for r in v.as_array_mut().unwrap() {
            let Some(per) = r.as_object_mut().unwrap().remove("chunkQuestions") else { continue };
            let t = |k: &str, key: &str| format!("{}{key}{}", per[k][0].as_str().unwrap(), per[k][1].as_str().unwrap());
            let keys: Vec<String> = r["state"]["chunks"].as_object().unwrap().keys().cloned().collect();
            let questions = r["questions"].as_object_mut().unwrap();
            for q in questions.values_mut().filter(|q| q["type"] == "choice") {
                let criteria = q["criteria"].as_object_mut().unwrap();
                for key in &keys {
                    criteria.insert(key.clone(), Value::String(t("option", key)));
                }
            }
            for key in &keys {
                let q = serde_json::json!({"type": "bool", "instructions": t("instructions", key),
                    "criteria": {"true": t("true", key), "false": t("false", key)}});
                questions.insert(key.clone(), q);
            }
        }
        v
    }

    #[test]
    fn requests_match_serde_json() {
        use crate::decide::{large_request, RequestInput};
        use crate::run::{Exchange, Run};
        let run = Run {
            question: "where \"is\" it?\n".into(),
            answer: "in a.ts 😀".into(),
            notes: "n".into(),
            ..Run::default()
        };
        let args = serde_json::json!({"command": "rg -n \"x\""});
        let texts = ["a:1:\"x\"\t", "b:2:日本\u{1}"];
        let mut input = RequestInput {
            run: &run,
            tool: "bash",
            arguments: &args,
            is_error: true,
            lines: 2,
            part: 1,
            parts: 2,
            first_number: 9,
            chunk_texts: &texts,
            later_calls: &[],
            superseded: None,
        };
        let one = large_request(&input);
        let mut later = run.clone();
        later.history.summary = Some("sum".into());
        later.history.exchanges.push(Exchange { user: "u".into(), assistant: "a".into() });
        input.run = &later;
        input.is_error = false;
        let two = large_request(&input);
        let mut mid = later.clone();
        mid.mid_run = true;
        input.run = &mid;
        let three = large_request(&input);
        // The output's next segment: the same head.
        input.part = 2;
        input.first_number = 11;
        let four = large_request(&input);
        let all = vec![one, two, three, four];
        assert_eq!(requests(&all, &[]), serde_json::to_string(&all).unwrap());
        // The compact form: each chunk's questions as their wording, the same once written out.
        let compact = requests_compact(&all, &[]);
        assert_eq!(written_out(&compact), serde_json::to_value(&all).unwrap());
        assert!(!compact.contains("chunk_9 is"));
        assert_eq!(compact.matches("\"head\":").count(), 1, "only the fourth has the head of another");
        assert_eq!(compact.matches("\"chunkQuestions\"").count(), 3, "the fourth asks as the third");
        assert!(compact.ends_with(",\"questionsOf\":2}]"), "{compact}");
        assert!(compact.contains("\"state\":{\"head\":[2,7],\"output_size\":\"2 lines, part 2 of 2\""), "{compact}");
        assert_eq!(requests(&[], &[]), "[]");
        // Whole items, every optional field both ways.
        use crate::classify::{ExchangeItem, SmallItem};
        let item = |status: Option<&str>, superseded: Option<&str>| SmallItem {
            tool: "bash `ls`".into(),
            status: status.map(str::to_string),
            superseded: superseded.map(str::to_string),
            output: "a\n\"b\" 😀".into(),
        };
        let small = crate::items::small_request(
            &later,
            vec![("output_1".into(), item(Some("failed"), Some("run again"))), ("output_2".into(), item(None, None))],
        );
        let turn = |calls: Vec<String>| ExchangeItem {
            user: "u".into(),
            assistant: "a".into(),
            tool_calls: calls,
            size: "1k".into(),
        };
        let exchanges = crate::exchange::request(
            &run,
            vec![
                ("exchange_1".into(), turn(vec!["bash `x`".into(), "read `y`".into()])),
                ("exchange_2".into(), turn(vec![])),
            ],
        );
        let items = vec![small, exchanges];
        assert_eq!(requests(&items, &[]), serde_json::to_string(&items).unwrap());

        // Chunks by reference: only the second request's chunks become [text, start, end].
        let refs = [None, Some(ChunkRefs { text: 3, ranges: vec![(0, 9), (10, 1_234_567)] })];
        let mut expected = serde_json::to_value(&all).unwrap();
        expected[1]["state"]["chunks"] = serde_json::json!({"chunk_9": [3, 0, 9], "chunk_10": [3, 10, 1_234_567]});
        let written = requests(&all, &refs);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&written).unwrap(), expected);
        assert!(written.contains(r#""chunks":{"chunk_9":[3,0,9],"chunk_10":[3,10,1234567]}"#), "in order");
    }
}
