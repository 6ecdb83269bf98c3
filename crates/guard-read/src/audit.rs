//! What the guard would do on a session recorded without it (issue 11,
//! `pi-context-guard audit`): at every run end of a branch, the items a
//! run-end pass with a classifier would judge, each with its characters and
//! the cache rewrite its edit would cause.
//!
//! For: asking the run-end pass's own planner (`pass::choose`, the gates of
//! `plan`) at each run end, and turning what it chose into candidates. Not
//! for: any rule of its own (which outputs, exchanges and images are
//! candidates is the planner's; the rewrite is `cache`'s), deciding anything
//! (no classifier is asked, so the upper bound is every candidate removed
//! whole), or reading files (the extension's `audit/`).
//!
//! Each run end sees the branch up to the next prompt, as the pass at that
//! run end would have. Edits the guard would have made at earlier run ends
//! are not applied, so a later rewrite is measured over the unedited
//! context: at most what it would have been. An old image or exchange is a
//! candidate at every later run end too; it is counted once, at the first.

use crate::cache::{entry_chars, rewrite_sized, Measured};
use crate::guard::exchange;
use crate::guard::images::young_from;
use crate::guard::items::{run_calls, superseded_by};
use crate::guard::pass::{choose, Choosing, PassInput};
use crate::guard::render::tool_label;
use crate::guard::run::Output;
use crate::json_text::push_str;
use crate::text::{js_prefix, push_usize};

/// A prompt as an exchange candidate's label shows it.
const PROMPT_LABEL_MAX: usize = 80;

/// One item the guard would send (or, for an image, remove without asking).
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// `large`, `small`, `exchange` or `image`, as the record's results name them.
    pub kind: &'static str,
    pub entry_id: String,
    pub tool: String,
    pub label: String,
    /// Characters its edit could keep out (an image: before minus its stub).
    pub chars: usize,
    pub rewrite: Measured,
    /// A later call of its run outdated it (a re-read or edit, a rerun).
    pub superseded: bool,
    /// The run end (0-based) at which it is first a candidate.
    pub run: usize,
}

/// Every candidate of every run end of `input.entries`, and the number of
/// run ends: at each, what the planner chooses over the branch up to it.
pub fn candidates(input: &PassInput) -> (Vec<Candidate>, usize) {
    let s = &input.settings;
    let entries = input.entries.as_slice();
    // Measured once for the session; each run end's rewrite sums its prefix of them.
    let sizes: Vec<usize> = entries.iter().map(entry_chars).collect();
    let prompts = exchange::prompts(entries);
    let mut ends: Vec<usize> = prompts.iter().skip(1).copied().collect();
    ends.push(entries.len());
    // Entry ids already counted, sorted (a BTreeSet<String> would add ~3.7 KB
    // to the `.wasm` for this one set).
    let mut counted: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let mut runs = 0;
    // Entries not yet old at the previous run end: the new old images are among them.
    let mut young = 0;
    for (e, end) in ends.into_iter().enumerate() {
        let (Some(prefix), Some(prefix_sizes)) = (entries.get(..end), sizes.get(..end)) else { continue };
        // Exchanges before the one that has just left the last `keepRecentExchanges` were chosen at
        // earlier run ends, and so were old images before `young`: the planner reads from the prompt
        // at or before both, so that no run end reads the whole branch again.
        let left = e.checked_sub(s.keep_recent_exchanges.saturating_add(1)).and_then(|j| prompts.get(j)).copied();
        let bound = young.min(left.unwrap_or(0));
        let seen = prompts.iter().rev().find(|&&p| p <= bound).copied().unwrap_or(0);
        let measure = rewrite_sized(&input.model, prefix, prefix_sizes);
        let Some(chosen) = choose(input, prefix, Choosing::RunEnd { measure: &measure, seen }) else { continue };
        young = young_from(prefix, s.image_keep_turns);
        let k = runs;
        runs += 1;
        for im in chosen.images {
            if first_time(&mut counted, &im.entry_id) {
                out.push(Candidate {
                    kind: "image",
                    label: im.tool.clone(),
                    tool: im.tool,
                    entry_id: im.entry_id,
                    chars: im.before_chars.saturating_sub(im.after_chars),
                    rewrite: Measured { chars: im.rewrite_chars, basis: im.rewrite_basis },
                    superseded: false,
                    run: k,
                });
            }
        }
        let output = |kind, o: Output, superseded| Candidate {
            kind,
            label: tool_label(&o.tool, &o.arguments),
            rewrite: measure.measure(o.entry_index),
            tool: o.tool,
            entry_id: o.entry_id,
            chars: o.chars,
            superseded,
            run: k,
        };
        // A run end's pass asks nothing about superseding for a large output (its answer is known):
        // the flag is the report's, by the same rule a checkpoint and the small outputs apply.
        let calls = if chosen.items.large.is_empty() { Vec::new() } else { run_calls(prefix, &chosen.run) };
        for o in chosen.items.large {
            let later = calls.iter().filter(|(i, _, _)| *i > o.entry_index).map(|(_, n, a)| (*n, *a));
            let superseded = superseded_by(&o.tool, &o.arguments, later).is_some();
            out.push(output("large", o, superseded));
        }
        for so in chosen.items.small {
            out.push(output("small", so.output, so.superseded.is_some()));
        }
        for x in chosen.items.exchanges {
            if first_time(&mut counted, &x.prompt_id) {
                out.push(Candidate {
                    kind: "exchange",
                    label: crate::text::sanitize_line(js_prefix(&x.prompt, PROMPT_LABEL_MAX), PROMPT_LABEL_MAX),
                    tool: String::new(),
                    rewrite: measure.measure(x.prompt_index),
                    entry_id: x.prompt_id,
                    chars: x.chars,
                    superseded: false,
                    run: k,
                });
            }
        }
    }
    (out, runs)
}

/// Adds `id` to the sorted `seen`; false when it was there already.
fn first_time(seen: &mut Vec<String>, id: &str) -> bool {
    match seen.binary_search_by(|s| s.as_str().cmp(id)) {
        Ok(_) => false,
        Err(at) => {
            seen.insert(at, id.to_string());
            true
        }
    }
}

/// [`candidates`] as JSON: `{ "runs": n, "cache": …, "candidates": [{ kind,
/// entryId, tool, label, chars, rewriteChars, basis, superseded, run }] }`,
/// written by hand (no serde derive in the wasm).
pub fn candidates_json(input: &PassInput) -> String {
    let (list, runs) = candidates(input);
    let mut out = String::from("{\"runs\":");
    push_usize(&mut out, runs);
    out.push_str(",\"cache\":\"");
    out.push_str(input.model.cache().as_str());
    out.push_str("\",\"candidates\":[");
    for (i, c) in list.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"kind\":\"");
        out.push_str(c.kind);
        out.push_str("\",\"entryId\":");
        push_str(&mut out, &c.entry_id);
        out.push_str(",\"tool\":");
        push_str(&mut out, &c.tool);
        out.push_str(",\"label\":");
        push_str(&mut out, &c.label);
        out.push_str(",\"chars\":");
        push_usize(&mut out, c.chars);
        out.push_str(",\"rewriteChars\":");
        push_usize(&mut out, c.rewrite.chars);
        out.push_str(",\"basis\":\"");
        out.push_str(c.rewrite.basis.as_str());
        out.push_str("\",\"superseded\":");
        out.push_str(if c.superseded { "true" } else { "false" });
        out.push_str(",\"run\":");
        push_usize(&mut out, c.run);
        out.push('}');
    }
    out.push_str("]}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{Block, ContextEntry, Message};
    use crate::guard::images::old_images;
    use crate::guard::pass::plan;
    use serde_json::json;

    fn entry(id: &str, m: Message) -> ContextEntry {
        ContextEntry { id: id.into(), entry_type: "message".into(), messages: vec![m], raw: None }
    }
    fn user(t: &str) -> Message {
        Message::User { content: crate::entry::Content::Text(t.into()) }
    }
    fn call(id: &str, cmd: &str) -> Message {
        Message::Assistant {
            content: vec![Block::ToolCall { id: id.into(), name: "bash".into(), arguments: json!({ "command": cmd }) }],
            stop_reason: None,
        }
    }
    fn say(t: &str) -> Message {
        Message::Assistant { content: vec![Block::Text { text: t.into() }], stop_reason: None }
    }
    fn result(id: &str, text: &str) -> Message {
        Message::ToolResult {
            tool_call_id: id.into(),
            tool_name: "bash".into(),
            content: vec![Block::Text { text: text.into() }],
            is_error: false,
        }
    }

    #[test]
    fn every_run_end_gives_its_outputs_with_the_rewrite_from_each() {
        let big = "x\n".repeat(5_000); // 10,000 characters: large
        let small = "y\n".repeat(400); // 800: small
        let entries = vec![
            entry("u1", user("first")),
            entry("a1", call("c1", "make")),
            entry("r1", result("c1", &big)),
            entry("a2", call("c2", "make")),
            entry("r2", result("c2", &small)),
            entry("a3", say("done")),
            entry("u2", user("second")),
            entry("a4", call("c3", "ls")),
            entry("r3", result("c3", &big)),
            entry("a5", say("ok")),
        ];
        let input = PassInput { entries, ..PassInput::default() };
        let (list, runs) = candidates(&input);
        assert_eq!(runs, 2);
        let ids: Vec<(&str, &str, usize, bool)> =
            list.iter().map(|c| (c.kind, c.entry_id.as_str(), c.run, c.superseded)).collect();
        // r1 is superseded by the second `make`; r2 is the last, so not.
        assert_eq!(ids, vec![("large", "r1", 0, true), ("small", "r2", 0, false), ("large", "r3", 1, false)]);
        // A prefix cache rewrites from the edited entry to the end of the run end's context,
        // by the measure's own sizes: r1's rewrite is the first run's entries from r1 on.
        let size = |i: usize| entry_chars(&input.entries[i]);
        let r1 = &list[0];
        assert_eq!(r1.chars, 10_000);
        assert_eq!(r1.rewrite.chars, (2..6).map(size).sum::<usize>());
        assert_eq!(r1.rewrite.basis, crate::cache::Basis::FirstEdit);
        assert_eq!(list[2].rewrite.chars, (8..10).map(size).sum::<usize>());
        let text = candidates_json(&input);
        // Four runs with outputs: the first two exchanges become old at the third and fourth run ends,
        // each once, and each exchange's chars are those the pass's own rule gives over the whole branch.
        let mut more = input.entries.clone();
        for n in 3..=5 {
            more.push(entry(&format!("u{n}"), user("next")));
            more.push(entry(&format!("c{n}"), call(&format!("k{n}"), "pwd")));
            more.push(entry(&format!("r{n}"), result(&format!("k{n}"), &big)));
            more.push(entry(&format!("s{n}"), say("ok")));
        }
        let input5 = PassInput { entries: more, ..PassInput::default() };
        let (list5, runs5) = candidates(&input5);
        assert_eq!(runs5, 5);
        let exchanges: Vec<(&str, usize, usize)> =
            list5.iter().filter(|c| c.kind == "exchange").map(|c| (c.entry_id.as_str(), c.run, c.chars)).collect();
        let last = crate::guard::run::find_run(&input5.entries, &input5.settings).unwrap();
        let whole: Vec<(String, usize)> = exchange::candidates(&input5.entries, &last, &input5.settings)
            .into_iter()
            .map(|x| (x.prompt_id, x.chars))
            .collect();
        assert_eq!(whole.len(), 2, "{whole:?}");
        assert_eq!(exchanges, vec![(whole[0].0.as_str(), 3, whole[0].1), (whole[1].0.as_str(), 4, whole[1].1)]);
        assert!(
            text.starts_with("{\"runs\":2,\"cache\":\"prefix\",\"candidates\":[{\"kind\":\"large\",\"entryId\":\"r1\"")
        );
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["candidates"][0]["rewriteChars"], json!(r1.rewrite.chars));
    }

    #[test]
    fn an_old_image_counts_once_where_it_first_is_old_as_over_the_whole_prefix() {
        use crate::testing::{png_b64, shot};
        // The screenshot is followed by 2 assistant messages in its run and 1 in each later run:
        // old (3 after it) first at the second run end.
        let entries = vec![
            entry("u1", user("look")),
            entry("a1", call("c1", "shot")),
            shot("img", "a screenshot", &png_b64(800, 600)),
            entry("a2", say("seen")),
            entry("a3", say("done")),
            entry("u2", user("next")),
            entry("a4", say("ok")),
            entry("u3", user("more")),
            entry("a5", say("ok")),
        ];
        let input = PassInput { entries, ..PassInput::default() };
        let (list, runs) = candidates(&input);
        assert_eq!(runs, 3);
        let images: Vec<&Candidate> = list.iter().filter(|c| c.kind == "image").collect();
        assert_eq!(images.len(), 1);
        assert_eq!((images[0].entry_id.as_str(), images[0].run), ("img", 1));
        // The same as the pass's own rule over the second run end's whole prefix.
        let prefix = &input.entries[..7];
        let whole = old_images(prefix, input.settings.image_keep_turns);
        assert_eq!(whole.len(), 1);
        assert_eq!(images[0].chars, whole[0].before_chars - whole[0].after_chars);
        let sizes: Vec<usize> = prefix.iter().map(entry_chars).collect();
        assert_eq!(images[0].rewrite, rewrite_sized(&input.model, prefix, &sizes).measure(2));
        assert_eq!(young_from(prefix, 3), 3, "entries up to the image are old at the second run end");
    }

    /// A saved session of seven runs: large outputs (one run's below `minRunChars`), small ones, a
    /// screenshot that grows old at the next run end, and exchanges that leave the last two one by one.
    fn saved_session() -> Vec<ContextEntry> {
        use crate::testing::{png_b64, shot};
        let big = "x\n".repeat(5_000);
        let small = "y\n".repeat(400);
        let mut e = Vec::new();
        for n in 0..7 {
            e.push(entry(&format!("u{n}"), user(&format!("task {n}"))));
            match n {
                // Below minRunChars alone: no large output; its small one still goes.
                2 => {
                    e.push(entry("a2", call("c2", "cat one")));
                    e.push(entry("r2", result("c2", &"z\n".repeat(2_500))));
                    e.push(entry("b2", call("d2", "ls")));
                    e.push(entry("q2", result("d2", &small)));
                }
                // A screenshot with one reply after it in its run: old at the next run end (three replies).
                3 => {
                    e.push(entry("a3", call("c-img", "shot")));
                    e.push(shot("img", "a screenshot", &png_b64(1280, 960)));
                }
                _ => {
                    e.push(entry(&format!("a{n}"), call(&format!("c{n}"), "make")));
                    e.push(entry(&format!("r{n}"), result(&format!("c{n}"), &big)));
                    e.push(entry(&format!("b{n}"), call(&format!("d{n}"), "make")));
                    e.push(entry(&format!("q{n}"), result(&format!("d{n}"), &small)));
                }
            }
            e.push(entry(&format!("s{n}"), say("done")));
        }
        e
    }

    #[test]
    fn each_run_end_is_what_the_planner_plans_over_the_branch_up_to_it() {
        let input = PassInput { entries: saved_session(), ..PassInput::default() };
        let (list, runs) = candidates(&input);
        assert_eq!(runs, 7);
        let prompts = exchange::prompts(&input.entries);
        let mut ends: Vec<usize> = prompts[1..].to_vec();
        ends.push(input.entries.len());
        let mut before: Vec<String> = Vec::new();
        for (k, end) in ends.into_iter().enumerate() {
            // The pass itself at this run end: its whole plan, requests and all, over the prefix.
            let p = plan(&PassInput { entries: input.entries[..end].to_vec(), ..PassInput::default() });
            let mut want: Vec<(&str, String, usize, usize)> = Vec::new();
            for (o, r) in p.pass.outputs.iter().zip(&p.pass.large_rewrite) {
                want.push(("large", o.entry_id.clone(), o.chars, *r));
            }
            for x in &p.pass.small {
                want.push(("small", x.entry_id.clone(), x.chars, x.rewrite_chars));
            }
            for x in p.pass.exchanges.iter().filter(|x| !before.contains(&x.prompt_id)) {
                want.push(("exchange", x.prompt_id.clone(), x.chars, x.rewrite_chars));
            }
            for im in p.pass.images.iter().filter(|im| !before.contains(&im.entry_id)) {
                want.push(("image", im.entry_id.clone(), im.before_chars - im.after_chars, im.rewrite_chars));
            }
            before.extend(p.pass.exchanges.iter().map(|x| x.prompt_id.clone()));
            before.extend(p.pass.images.iter().map(|im| im.entry_id.clone()));
            let mut got: Vec<(&str, String, usize, usize)> = list
                .iter()
                .filter(|c| c.run == k)
                .map(|c| (c.kind, c.entry_id.clone(), c.chars, c.rewrite.chars))
                .collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "run end {k}");
        }
        let at = |k: usize| -> Vec<(&str, &str)> {
            list.iter().filter(|c| c.run == k).map(|c| (c.kind, c.entry_id.as_str())).collect()
        };
        // What the planner says, run end by run end.
        assert_eq!(at(0), [("large", "r0"), ("small", "q0")]);
        assert_eq!(at(2), [("small", "q2")], "5,000 characters of large output are below minRunChars");
        assert_eq!(at(3), [("exchange", "u0")], "the screenshot run has no output to judge; u0 leaves the last two");
        assert_eq!(at(4), [("image", "img"), ("large", "r4"), ("small", "q4"), ("exchange", "u1")]);
        assert_eq!(at(5), [("large", "r5"), ("small", "q5"), ("exchange", "u2")]);
        assert_eq!(at(6), [("large", "r6"), ("small", "q6"), ("exchange", "u3")]);
        // r0 is superseded by the second `make` of its run (the report's flag).
        assert!(list.iter().find(|c| c.entry_id == "r0").unwrap().superseded);
    }
}
