//! The system message's rows: the prompt by section, each context file's
//! block by its path, and the tool definitions one by one.
//!
//! Pi's `estimateTokens` counts a system message as one ceiling over all of
//! its characters: the content, every section, and `JSON.stringify(toolsAdded)`.
//! Rounding each row on its own would make the rows disagree with that by a
//! few tokens, so every row is a stretch `[start, end)` of one character
//! stream (content, sections in order, then the tool array) and is worth
//! `ceil(end / 4) - ceil(start / 4)` tokens. Stretches that tile the message
//! sum to exactly Pi's count; a row inside another (a context file inside
//! `project_context`, a tool inside the array) is never worth more than the
//! stretch around it.

use super::{SystemInputs, MAX_SAFE};
use context_guard_base::text::{js_len, js_suffix, sanitize_line};

/// How a context file's block opens inside `project_context` (Pi's
/// `renderProjectContext`: blocks joined by a blank line).
const FILE_OPEN: &str = "<project_instructions path=\"";
const FILE_CLOSE: &str = "</project_instructions>";
/// Longer paths are cut to this before their end is taken.
const PATH_MAX: usize = 4096;

/// One row of the system message, before the composition gives it its figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// `system`, `system:<section>`, `system:file:<path>`, `tools`, `tool:<name>`.
    pub id: String,
    /// Sanitized, one line, at most `max` characters.
    pub label: String,
    pub tokens: u64,
    /// Tools in the `tools` row; 0 elsewhere.
    pub count: u32,
    /// 0 for `system` and `tools`, 1 for the rows inside them.
    pub depth: u8,
}

/// Tokens of the stretch `[start, end)` of the message's characters.
fn stretch(start: u64, end: u64) -> u64 {
    end.div_ceil(4).saturating_sub(start.div_ceil(4)).min(MAX_SAFE)
}

fn len(s: &str) -> u64 {
    js_len(s) as u64
}

fn part(id: String, label: String, tokens: u64, depth: u8) -> Part {
    Part { id, label, tokens, count: 0, depth }
}

/// A context file's label: its path relative to the session's folder when it
/// is inside it, else its end (the file name matters more than the root).
fn file_label(path: &str, cwd: &str, max: usize) -> String {
    let relative = match path.strip_prefix(cwd) {
        Some(rest) if !cwd.is_empty() && rest.starts_with('/') => &rest[1..],
        _ => path,
    };
    // Sanitized whole (a path is one line), then cut from the front.
    let clean = sanitize_line(relative, PATH_MAX);
    if js_len(&clean) <= max {
        clean
    } else {
        let mut out = String::from("…");
        out.push_str(js_suffix(&clean, max.saturating_sub(1)));
        out
    }
}

/// The context files' blocks inside `project_context`, as byte ranges with
/// their paths. A block starts at the section's start or after a blank line,
/// and ends at the last closing tag before the next block; a file whose text
/// itself holds such a tag can move characters between neighbouring files,
/// never out of the section.
fn files(text: &str) -> Vec<(usize, usize, &str)> {
    let starts: Vec<usize> =
        text.match_indices(FILE_OPEN).map(|(at, _)| at).filter(|&at| at == 0 || text[..at].ends_with("\n\n")).collect();
    let mut out = Vec::with_capacity(starts.len());
    for (k, &start) in starts.iter().enumerate() {
        let limit = starts.get(k + 1).copied().unwrap_or(text.len());
        let body = &text[start..limit];
        let end = body.rfind(FILE_CLOSE).map_or(limit, |at| start + at + FILE_CLOSE.len());
        let after = &body[FILE_OPEN.len()..];
        let path = after.find("\">").map_or("", |at| &after[..at]);
        out.push((start, end, path));
    }
    out
}

/// The rows of the system message: `system` with its sections (and context
/// files), then `tools` with each definition, largest first. Labels are at
/// most `max` characters. The two top rows sum to Pi's `estimateTokens` of
/// the message.
pub fn parts(system: &SystemInputs, max: usize) -> Vec<Part> {
    let cwd = system
        .sections
        .iter()
        .find(|(name, _)| name == "cwd")
        .map(|(_, t)| t.trim_start_matches("<cwd>\n").trim_end_matches("\n</cwd>"))
        .unwrap_or("");
    let mut children = Vec::new();
    let content = len(&system.content);
    if content > 0 && !system.sections.is_empty() {
        children.push(part("system:content".into(), "content".into(), stretch(0, content), 1));
    }
    let mut at = content;
    for (name, text) in &system.sections {
        let end = at.saturating_add(len(text));
        let label = sanitize_line(name, max);
        if name == "project_context" {
            let blocks = files(text);
            let mut in_files = 0u64;
            let mut rows = Vec::with_capacity(blocks.len());
            for (start, stop, path) in blocks {
                let from = at + len(&text[..start]);
                let tokens = stretch(from, from + len(&text[start..stop]));
                in_files = in_files.saturating_add(tokens);
                let label = file_label(path, cwd, max);
                rows.push(part(format!("system:file:{label}"), label, tokens, 1));
            }
            // The wrapper, the heading and the blank lines between files.
            children.push(part(format!("system:{label}"), label, stretch(at, end).saturating_sub(in_files), 1));
            children.extend(rows);
        } else {
            children.push(part(format!("system:{label}"), label, stretch(at, end), 1));
        }
        at = end;
    }
    let prompt_end = at;
    let tools_end = prompt_end.saturating_add(system.tools_chars);
    let mut out = Vec::with_capacity(children.len() + system.tools.len() + 2);
    out.push(part("system".into(), "System prompt".into(), stretch(0, prompt_end), 0));
    out.append(&mut children);
    out.push(Part {
        id: "tools".into(),
        label: "Tool definitions".into(),
        tokens: stretch(prompt_end, tools_end),
        count: u32::try_from(system.tools.len()).unwrap_or(u32::MAX),
        depth: 0,
    });
    // Each definition is its stretch of the array, after the `[` and the commas.
    let mut tools: Vec<(u64, String)> = Vec::with_capacity(system.tools.len());
    let mut at = prompt_end.saturating_add(1);
    for tool in &system.tools {
        let end = at.saturating_add(tool.chars).min(tools_end);
        let label = sanitize_line(&tool.name, max);
        tools.push((stretch(at.min(end), end), if label.is_empty() { "(no name)".into() } else { label }));
        at = end.saturating_add(1);
    }
    let keys: Vec<u64> = tools.iter().map(|t| t.0).collect();
    for i in super::largest_first(&keys) {
        if let Some((tokens, label)) = tools.get_mut(i).map(std::mem::take) {
            out.push(part(format!("tool:{label}"), label, tokens, 1));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::ToolDigest;
    use super::*;

    fn system(content: &str, sections: &[(&str, &str)], tools: &[(&str, u64)]) -> SystemInputs {
        let tools: Vec<ToolDigest> = tools.iter().map(|&(n, c)| ToolDigest { name: n.into(), chars: c }).collect();
        let chars: u64 = tools.iter().map(|t| t.chars).sum::<u64>() + tools.len() as u64 + 1;
        SystemInputs {
            content: content.into(),
            sections: sections.iter().map(|&(n, t)| (n.to_string(), t.to_string())).collect(),
            tools_chars: if tools.is_empty() { 0 } else { chars },
            tools,
        }
    }

    fn figures(parts: &[Part]) -> Vec<(&str, u64, u8)> {
        parts.iter().map(|p| (p.id.as_str(), p.tokens, p.depth)).collect()
    }

    fn top(parts: &[Part]) -> u64 {
        parts.iter().filter(|p| p.depth == 0).map(|p| p.tokens).sum()
    }

    #[test]
    fn rows_tile_the_message_and_sum_to_one_ceiling() {
        // 5 + 7 + 3 characters of prompt, a 2-tool array of 1 + 9 + 1 + 6 + 1 = 18: 33 in all.
        let s = system("", &[("preamble", "aaaaa"), ("rules", "bbbbbbb"), ("cwd", "ccc")], &[("read", 9), ("ls", 6)]);
        let p = parts(&s, 40);
        assert_eq!(top(&p), 33u64.div_ceil(4), "{p:#?}");
        assert_eq!(
            figures(&p),
            [
                ("system", 4, 0),
                ("system:preamble", 2, 1),
                ("system:rules", 1, 1),
                ("system:cwd", 1, 1),
                ("tools", 5, 0),
                ("tool:read", 3, 1),
                ("tool:ls", 1, 1),
            ]
        );
        let children: u64 = p.iter().filter(|x| x.id.starts_with("system:")).map(|x| x.tokens).sum();
        assert_eq!(children, p[0].tokens, "the sections sum to the prompt row");
        assert_eq!(p[4].count, 2);
    }

    #[test]
    fn the_sum_is_exact_for_any_lengths() {
        for a in 0..9usize {
            for b in 0..9usize {
                for t in 0..9u64 {
                    let (x, y) = ("x".repeat(a), "y".repeat(b));
                    let s = system("c", &[("preamble", &x), ("docs", &y)], &[("t", t)]);
                    let p = parts(&s, 40);
                    let all = 1 + a as u64 + b as u64 + t + 2;
                    assert_eq!(top(&p), all.div_ceil(4), "{a} {b} {t}");
                    let inside: u64 =
                        p.iter().filter(|x| x.depth == 1 && x.id.starts_with("system:")).map(|x| x.tokens).sum();
                    assert_eq!(inside, p[0].tokens, "{a} {b} {t}");
                }
            }
        }
    }

    #[test]
    fn each_context_file_is_its_own_row_by_path() {
        let ctx = "<project_context>\nProject-specific instructions and guidelines:\n\n\
            <project_instructions path=\"/home/u/AGENTS.md\">\nglobal\n</project_instructions>\n\n\
            <project_instructions path=\"/w/app/AGENTS.md\">\nlocal rules, quoting </project_instructions> once\n</project_instructions>\n\
            </project_context>";
        let s = system("", &[("preamble", "p"), ("project_context", ctx), ("cwd", "<cwd>\n/w/app\n</cwd>")], &[]);
        let p = parts(&s, 40);
        let ids: Vec<&str> = p.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "system",
                "system:preamble",
                "system:project_context",
                "system:file:/home/u/AGENTS.md",
                "system:file:AGENTS.md",
                "system:cwd",
                "tools"
            ]
        );
        let block = "<project_instructions path=\"/w/app/AGENTS.md\">\nlocal rules, quoting </project_instructions> once\n</project_instructions>";
        let from = 1 + js_len(&ctx[..ctx.find("<project_instructions path=\"/w").unwrap_or(0)]) as u64;
        assert_eq!(p[4].tokens, stretch(from, from + len(block)), "the whole block, its closing tag included");
        let inside: u64 = p.iter().filter(|x| x.depth == 1).map(|x| x.tokens).sum();
        assert_eq!(inside, p[0].tokens);
        assert_eq!(p[0].tokens, (1 + len(ctx) + len("<cwd>\n/w/app\n</cwd>")).div_ceil(4));
    }

    #[test]
    fn long_paths_keep_their_end_and_hostile_names_are_clean() {
        assert_eq!(file_label("/a/b/AGENTS.md", "/a", 40), "b/AGENTS.md");
        assert_eq!(file_label("/ab/AGENTS.md", "/a", 40), "/ab/AGENTS.md");
        let long = format!("/{}/AGENTS.md", "d".repeat(80));
        let label = file_label(&long, "/x", 20);
        assert!(label.starts_with('…') && label.ends_with("/AGENTS.md") && js_len(&label) == 20, "{label}");
        let s = system("", &[("pre\x1b[2Jamble", "x")], &[("\x07evil\ttool", 10), ("", 3)]);
        for p in parts(&s, 40) {
            assert!(!p.label.chars().any(char::is_control), "{:?}", p.label);
            assert!(!p.label.is_empty());
        }
    }

    #[test]
    fn content_alone_has_no_children_and_a_short_tool_array_cannot_overflow() {
        let s = system("forced prompt", &[], &[]);
        assert_eq!(figures(&parts(&s, 40)), [("system", 4, 0), ("tools", 0, 0)]);
        let mut s = system("", &[("preamble", "p")], &[("big", 400)]);
        s.tools_chars = 10;
        let p = parts(&s, 40);
        let tool = p.iter().find(|x| x.id == "tool:big").map_or(u64::MAX, |x| x.tokens);
        assert!(tool <= p.iter().find(|x| x.id == "tools").map_or(0, |x| x.tokens), "{p:#?}");
    }
}
