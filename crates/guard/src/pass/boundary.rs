//! The pass over the forms that cross to the extension: long texts out of
//! line as UTF-8 bytes beside the JSON, chunks and kept chunks as ranges of
//! them (docs/DESIGN.md "The pass across the boundary"). The JSON itself is
//! written by `guard::wire`.

use std::rc::Rc;

use serde_json::Value;

use crate::classify::State;
use crate::scanned::Scanned;
use crate::wire::ChunkRefs;

use super::finish::finish;
use super::plan::plan;
use super::{covers, PassInput, PassState, Plan, Skip};

/// A plan in the form the boundary hands out: the requests as JSON text, and
/// the state, which stays where it was made (inside the wasm module, held by
/// the extension as a handle) until [`finish_json`] reads it.
#[derive(Debug)]
pub struct Planned {
    /// `ClassifierContext[]` as JSON text; see [`plan_json`] for the chunk references.
    pub requests: String,
    pub state: PassState,
    pub skipped: Option<Skip>,
}

/// [`plan`] over the boundary's forms, which are shaped by a pass's size
/// (the budget: ≤ 15 ms of the pass's own work for 1 MB):
///
/// - `input` is the UTF-8 JSON of `PassInput` whose long text blocks are out
///   of line (`{"type": "text", "textAt": k}`, see
///   [`entry::restore_texts`](crate::entry::restore_texts)); `texts` holds
///   them as UTF-8, one after another, and `lengths` their byte lengths. A
///   megabyte of output crosses as one copy of bytes: it is neither escaped
///   into JSON by the extension nor unescaped here.
/// - In the requests, a chunk of an output whose text is exactly out-of-line
///   text `k` is written as `[k, start, end]`: the range of `texts[k]` in
///   JavaScript characters (UTF-16 units, as `String.prototype.slice` takes
///   them) whose slice is the chunk's text. The extension slices its own
///   string, so the chunk texts are neither escaped here nor decoded and
///   parsed there. Other chunks are written as strings.
///
/// The requests are otherwise exactly what serde_json writes for them.
pub fn plan_json(input: &[u8], texts: &[u8], lengths: &[u32]) -> Result<Planned, String> {
    plan_json_with(input, texts, lengths, &Rc::default())
}

/// [`plan_json`] with the secrets of outputs found when they arrived.
pub fn plan_json_with(input: &[u8], texts: &[u8], lengths: &[u32], scanned: &Rc<Scanned>) -> Result<Planned, String> {
    plan_json_by(input, texts, lengths, &mut |v| {
        let mut input = PassInput::from_value(v);
        input.scanned = Rc::clone(scanned);
        plan(&input)
    })
}

/// [`plan_json`] with another first step over the same forms: `step` reads
/// the input (its entries' texts restored) and plans (a checkpoint). A
/// `dyn` step, not a generic one, so the wasm holds one copy of this path.
pub fn plan_json_by(
    input: &[u8],
    texts: &[u8],
    lengths: &[u32],
    step: &mut dyn FnMut(Value) -> Plan,
) -> Result<Planned, String> {
    let texts = split_texts(texts, lengths)?;
    let mut plan = step(read_input(input, &texts)?);
    let refs = chunk_refs(&mut plan, &texts);
    let requests = crate::wire::requests_compact(&plan.requests, &refs);
    Ok(Planned { requests, skipped: plan.pass.skipped, state: plan.pass })
}

/// The input's JSON with its entries' out-of-line texts put back.
fn read_input(input: &[u8], texts: &[&str]) -> Result<Value, String> {
    let mut value: Value = serde_json::from_str(utf8(input)?).map_err(|e| format!("pass input: {e}"))?;
    if let Some(entries) = value.get_mut("entries") {
        crate::entry::restore_texts(entries, texts);
    }
    Ok(value)
}

/// [`PassInput`] over the boundary's forms (as [`plan_json`] reads it), for
/// a step that plans nothing: the audit's.
pub fn input_json(input: &[u8], texts: &[u8], lengths: &[u32]) -> Result<PassInput, String> {
    let texts = split_texts(texts, lengths)?;
    Ok(PassInput::from_value(read_input(input, &texts)?))
}

/// The out-of-line texts, each checked to be UTF-8.
fn split_texts<'a>(texts: &'a [u8], lengths: &[u32]) -> Result<Vec<&'a str>, String> {
    let mut rest = texts;
    let mut out = Vec::with_capacity(lengths.len());
    for &len in lengths {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > rest.len() {
            return Err("pass texts: the lengths exceed the bytes".to_string());
        }
        let (text, after) = rest.split_at(len);
        out.push(utf8(text)?);
        rest = after;
    }
    Ok(out)
}

/// Notes which outputs are exactly one of `texts` (an output of one text
/// block, the usual case), and for each request of such an output where its
/// chunks are.
fn chunk_refs(plan: &mut Plan, texts: &[&str]) -> Vec<Option<ChunkRefs>> {
    let mut refs = vec![None; plan.requests.len()];
    for o in &mut plan.pass.outputs {
        let Some(text) = texts.iter().position(|t| crate::text::same_bytes(t.as_bytes(), o.text.as_bytes())) else {
            continue;
        };
        if !covers(o) {
            continue;
        }
        o.source = Some(text);
        let units = o.chunk_units();
        for p in &o.segments {
            let first = p.segment.first;
            let (Some(r), Some(part)) = (p.request, units.get(first..first.saturating_add(p.segment.count))) else {
                continue;
            };
            // Chunks that had secrets withheld cross as the strings the core wrote.
            let withheld = matches!(plan.requests.get(r).map(|q| &q.state), Some(State::Large(s)) if s.chunks.withheld);
            if let Some(slot) = refs.get_mut(r).filter(|_| !withheld) {
                *slot = Some(ChunkRefs { text, ranges: part.to_vec() });
            }
        }
    }
    refs
}

/// Bytes as text, checked. Read through `from_str` like every other JSON in
/// the core, so the wasm carries one JSON reader, not one per input kind.
fn utf8(bytes: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))
}

/// [`finish`] over JSON: a planned pass's state and the runner's result
/// (UTF-8 JSON of `PassAnswers`) in, `Outcome` as JSON text out, as
/// serde_json writes it except that a replacement text with kept chunks of an
/// out-of-line text is written as its parts: strings, and `[k, start, end]`
/// for the range of `texts[k]` in UTF-16 units, to be joined as they are. A
/// megabyte of kept output is then neither escaped here nor decoded and
/// parsed by the extension, which slices its own string (as for the
/// requests, see [`plan_json`]).
pub fn finish_json(pass: &PassState, answers: &[u8]) -> Result<String, String> {
    let text = utf8(answers)?;
    let answers = match super::answers::read(text) {
        Some(answers) => answers,
        None => {
            crate::read::from_json(text, super::PassAnswers::from_value).map_err(|e| format!("pass answers: {e}"))?
        }
    };
    crate::wire::outcome(&finish(pass, &answers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::tests::{answer_keeping, grep_text, input};
    use crate::scanned::Scanned;
    use crate::wire::tests::written_out;
    use serde_json::json;

    /// The pass input as the extension sends it: the tool result's text out of line.
    fn out_of_line(inp: &PassInput) -> (Vec<u8>, Vec<u8>, Vec<u32>) {
        let mut v = serde_json::to_value(inp).unwrap();
        let mut texts = Vec::new();
        let mut lengths = Vec::new();
        for e in v["entries"].as_array_mut().unwrap() {
            for m in e["messages"].as_array_mut().unwrap() {
                for b in m["content"].as_array_mut().into_iter().flatten() {
                    if b["type"] == "text" && b["text"].as_str().is_some_and(|t| t.len() > 1000) {
                        let t = b["text"].as_str().unwrap().to_string();
                        texts.extend_from_slice(t.as_bytes());
                        *b = json!({"type": "text", "textAt": lengths.len()});
                        lengths.push(t.len() as u32);
                    }
                }
            }
        }
        (serde_json::to_vec(&v).unwrap(), texts, lengths)
    }

    #[test]
    fn the_json_forms_take_texts_out_of_line_and_give_chunks_as_ranges() {
        let text = format!("{}\n\"quoted\" 日本 😀\n", grep_text(100));
        let inp = input(&[("bash", "", json!({"command": "rg -n status"}), text.clone())]);
        let p = plan(&inp);

        // All inline: what serde_json writes, the chunk questions as their wording.
        let planned = plan_json(&serde_json::to_vec(&inp).unwrap(), &[], &[]).unwrap();
        assert_eq!(planned.skipped, None);
        assert_eq!(planned.requests, crate::wire::requests_compact(&p.requests, &[]));
        assert_eq!(written_out(&planned.requests), serde_json::to_value(&p.requests).unwrap());
        assert!(!planned.requests.contains("chunk_1 is needed"), "no chunk's question written out");
        assert_eq!(planned.state, p.pass);

        // Out of line: the same plan; each chunk is a range of the text in
        // UTF-16 units, and slicing gives the chunk text.
        let (json, texts, lengths) = out_of_line(&inp);
        let planned = plan_json(&json, &texts, &lengths).unwrap();
        assert_eq!(planned.state.outputs[0].source, Some(0));
        let mut state = planned.state.clone();
        state.outputs[0].source = None;
        assert_eq!(state, p.pass);
        let units: Vec<u16> = text.encode_utf16().collect();
        let slice = |range: &Value| {
            let r: Vec<usize> = range.as_array().unwrap().iter().map(|n| n.as_u64().unwrap() as usize).collect();
            assert_eq!(r[0], 0, "the only out-of-line text");
            String::from_utf16(&units[r[1]..r[2]]).unwrap()
        };
        let mut requests = written_out(&planned.requests);
        for r in requests.as_array_mut().unwrap() {
            for (_, c) in r["state"]["chunks"].as_object_mut().unwrap() {
                *c = Value::String(slice(c));
            }
        }
        assert_eq!(requests, serde_json::to_value(&p.requests).unwrap());

        // The outcome: the kept chunks as ranges too; joined, the replacement text.
        let answers = answer_keeping(&p, "src/f3.ts:");
        let expected = finish(&p.pass, &answers);
        let written = finish_json(&planned.state, &serde_json::to_vec(&answers).unwrap()).unwrap();
        let mut out: Value = serde_json::from_str(&written).unwrap();
        let block = &mut out["entries"][0]["replacement"]["content"][0]["text"];
        let parts = block.as_array().unwrap().clone();
        assert!(parts.iter().any(Value::is_array) && parts.iter().any(Value::is_string));
        *block = Value::String(parts.iter().map(|p| p.as_str().map_or_else(|| slice(p), str::to_string)).collect());
        assert_eq!(out, serde_json::to_value(&expected).unwrap());
        // Without out-of-line texts, byte for byte what serde_json writes.
        let written = finish_json(&p.pass, &serde_json::to_vec(&answers).unwrap()).unwrap();
        assert_eq!(written, serde_json::to_string(&expected).unwrap(), "what serde_json writes");

        // Malformed forms are errors, or read as empty text; never a panic.
        assert!(plan_json(&json, &texts, &[lengths[0] + 1]).is_err());
        assert!(plan_json(&json, b"\xff\xfe", &[2]).is_err());
        assert!(plan_json(b"\xff", &[], &[]).is_err());
        assert!(finish_json(&planned.state, b"\xff").is_err());
        let missing = plan_json(&json, &[], &[]).unwrap();
        assert_eq!(missing.skipped, Some(Skip::NoLargeOutputs), "a missing text reads as empty");
    }
    #[test]
    fn secrets_leave_as_placeholders_and_stay_in_the_window() {
        // A grep over a project that hits a `.env`-style line in a config file.
        let key = "AKIA4HK2JQ7ZT5XW9P3L";
        let text =
            format!("{}config/deploy.ts:3:  const AWS_KEY = \"{key}\"; // status\n{}", grep_text(60), grep_text(60));
        let inp = input(&[("bash", "", json!({"command": format!("rg -n status --glob '!{key}'")}), text.clone())]);
        let (json, texts, lengths) = out_of_line(&inp);
        let planned = plan_json(&json, &texts, &lengths).unwrap();
        assert!(!planned.requests.contains(key), "the key is in no request");
        assert!(planned.requests.contains("[secret: aws-access-key]"));
        let requests = written_out(&planned.requests);
        let chunks: Vec<&Value> = requests
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["state"]["chunks"].as_object().unwrap().values())
            .collect();
        assert!(chunks.iter().any(|c| c.is_array()), "chunks without a secret still cross as ranges");
        assert_eq!(
            chunks.iter().filter(|c| c.as_str().is_some_and(|t| t.contains("[secret: aws-access-key]"))).count(),
            1
        );
        assert_eq!(
            planned.state.withheld.kinds,
            [("aws-access-key".to_string(), 1)],
            "the same key in the arguments counts once"
        );

        // Kept, the chunk is the original: the window never sees a placeholder.
        let p = plan(&inp);
        let answers = answer_keeping(&p, "config/deploy.ts");
        let out = finish(&p.pass, &answers);
        let Some(crate::outcome::Draft::ContextEdit { replacement: Some(r), .. }) = out.entries.first() else {
            panic!("{:?}", out.entries)
        };
        let text = serde_json::to_string(r).unwrap();
        assert!(text.contains(key) && !text.contains("[secret:"));
        let record = out.record.unwrap();
        assert_eq!(serde_json::to_value(&record).unwrap()["withheld"], json!({"secrets": {"aws-access-key": 1}}));
    }

    #[test]
    fn secrets_found_when_outputs_arrived_are_what_the_pass_sends() {
        let key = "AKIA4HK2JQ7ZT5XW9P3L";
        let with_key =
            |k: &str| format!("{}deploy.ts:3:  const AWS_KEY = \"{k}\"; // status\n{}", grep_text(60), grep_text(60));
        let inp = input(&[("bash", "", json!({"command": "rg -n status"}), with_key(key))]);
        let cold = plan(&inp);
        let mut scanned = Scanned::default();
        assert_eq!(scanned.note(&inp.entries, &inp.settings), 1, "the one large output");
        assert_eq!(scanned.note(&inp.entries, &inp.settings), 0, "each output is scanned once");

        // Planned with the scans, the pass sends exactly what it sends finding the secrets itself.
        let warm = plan(&PassInput { scanned: Rc::new(scanned.clone()), ..inp.clone() });
        assert_eq!(serde_json::to_string(&warm.requests).unwrap(), serde_json::to_string(&cold.requests).unwrap());
        assert_eq!(warm.pass.withheld, cold.pass.withheld);
        assert!(!serde_json::to_string(&warm.requests).unwrap().contains(key));

        // And it reads them rather than scanning again: scans of another text under the same id and
        // length are taken as they are (Pi never changes an entry, so this cannot happen in a session).
        let mut other = Scanned::default();
        let blank = input(&[("bash", "", json!({"command": "rg -n status"}), with_key(&"x".repeat(key.len())))]);
        other.note(&blank.entries, &blank.settings);
        let misled = plan(&PassInput { scanned: Rc::new(other), ..inp.clone() });
        assert!(serde_json::to_string(&misled.requests).unwrap().contains(key));

        // Scans made under other user patterns, or of a text of another length, are not used.
        let mut patterned = inp.clone();
        patterned.settings.secret_patterns = vec!["status = 3".into()];
        let found_here = plan(&patterned);
        let stale = plan(&PassInput { scanned: Rc::new(scanned), ..patterned });
        assert_eq!(
            serde_json::to_string(&stale.requests).unwrap(),
            serde_json::to_string(&found_here.requests).unwrap()
        );
        assert!(serde_json::to_string(&stale.requests).unwrap().contains("[secret: custom]"));
        let mut shorter = Scanned::default();
        let short = input(&[("bash", "", json!({"command": "rg -n status"}), with_key("x"))]);
        shorter.note(&short.entries, &short.settings);
        let other_length = plan(&PassInput { scanned: Rc::new(shorter), ..inp });
        assert!(!serde_json::to_string(&other_length.requests).unwrap().contains(key));
    }

    #[test]
    fn outputs_of_secret_files_are_never_sent() {
        let env = format!("{}\nAPI_TOKEN=abc\n", "# settings\n".repeat(500));
        let inp = input(&[
            ("read", "", json!({"path": "/repo/.env"}), env),
            ("bash", "", json!({"command": "rg -n status"}), grep_text(200)),
        ]);
        let p = plan(&inp);
        assert!(!serde_json::to_string(&p.requests).unwrap().contains("# settings"));
        assert_eq!(p.pass.withheld.files, ["read `/repo/.env`"]);
        assert!(p.pass.outputs.iter().all(|o| o.tool != "read"));
    }
}
