//! The workspace's layout, checked: inside each crate, imports go one way
//! (docs/DESIGN.md "Module map").
//!
//! Between crates Cargo holds the direction: a crate names only the crates it
//! depends on, and a cycle of dependencies does not build. So what this test
//! checked when the core was one crate, that `report/` and `guard/` never
//! named each other and the base named neither, is now Cargo's. What Cargo
//! cannot see is a cycle between the modules of one crate, which Rust allows:
//! that is checked here, for every crate under `crates/`.
//!
//! This test reads every source file of each crate, builds the graph of
//! file-level modules from the paths each one names (`crate::…`, `super::…`,
//! `self::…` and its own child modules, in `use` trees and in expressions,
//! test code included; comments and strings are skipped), and asserts that
//! no two modules of a crate import each other, directly or around a circle.
//! A path into another crate (`context_guard_base::…`, or a lower crate's
//! module imported at the crate root, such as the guard's `crate::text`)
//! names no module file of this crate and is not counted.
//!
//! A folder's `mod.rs` (or `name.rs` beside `name/`) is that folder's module.
//! One kind of edge is not counted: a module naming one of its own ancestors
//! (a child reading its folder's shared types through `super::`, or any module
//! naming the crate root for an exported macro). The folder declares and
//! assembles its children, so that pair is the folder's interior, not an
//! import between parts; every other edge, sideways or down, is counted.

// A test: a failed expectation is how it reports (clippy.toml allows this inside #[test] only).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module as a list of names below the crate root (`[]` is `lib.rs`).
type Module = Vec<String>;

/// One source file of the core.
struct Source {
    module: Module,
    /// Path for messages, relative to the crate (`src/pass/plan.rs`).
    shown: String,
    /// The text with comments and string and char literals blanked out
    /// (newlines kept, so offsets still give line numbers).
    code: String,
}

/// A path a file names, resolved to the deepest module file it reaches.
struct Named {
    full: Vec<String>,
    target: Module,
    line: usize,
}

fn show(m: &[String]) -> String {
    if m.is_empty() {
        "crate".to_string()
    } else {
        format!("crate::{}", m.join("::"))
    }
}

fn sources(src: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("read the source folder")
            .map(|e| e.expect("a folder entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = p.strip_prefix(src).expect("under src");
            let mut module: Module = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            let file = module.pop().expect("a file name");
            match file.as_str() {
                "lib.rs" | "mod.rs" => {}
                f => module.push(f.trim_end_matches(".rs").to_string()),
            }
            let text = std::fs::read_to_string(&p).expect("read a source file");
            out.push(Source { module, shown: format!("src/{}", rel.display()), code: blank(&text) });
        }
    }
    out.sort_by(|a, b| a.module.cmp(&b.module));
    out
}

/// Blanks comments, strings and char literals with spaces (newlines kept).
fn blank(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let wipe = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').map_or(b.len(), |n| i + n);
            wipe(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            wipe(&mut out, i, j);
            i = j;
        } else if (rest.starts_with(b"r\"") || rest.starts_with(b"r#") || rest.starts_with(b"br\""))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let start = i + if rest[0] == b'b' { 2 } else { 1 };
            let hashes = b[start..].iter().take_while(|&&c| c == b'#').count();
            if b.get(start + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = start + hashes + 1;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |n| body + n + close.len());
            wipe(&mut out, i, end);
            i = end;
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            wipe(&mut out, i, end);
            i = end;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{1F600}', '日') or a lifetime ('a).
            if rest.get(1) == Some(&b'\\') {
                let end = b[i + 2..].iter().position(|&c| c == b'\'').map_or(b.len(), |n| i + 2 + n + 1);
                wipe(&mut out, i, end);
                i = end;
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                if b.get(i + 1 + ch) == Some(&b'\'') {
                    wipe(&mut out, i, i + 2 + ch);
                    i += 2 + ch;
                } else {
                    i += 1;
                }
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The inline modules (`mod tests { … }`) open at `at`, outermost first.
fn inline_modules(code: &str, at: usize) -> Vec<String> {
    let b = code.as_bytes();
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending: Option<String> = None;
    let mut i = 0;
    while i < at.min(b.len()) {
        let c = b[i];
        if c == b'{' {
            depth += 1;
            if let Some(name) = pending.take() {
                open.push((name, depth));
            }
        } else if c == b'}' {
            if open.last().is_some_and(|(_, d)| *d == depth) {
                open.pop();
            }
            depth = depth.saturating_sub(1);
        } else if c == b';' {
            pending = None;
        } else if code[i..].starts_with("mod ") && (i == 0 || !is_ident(b[i - 1])) {
            let name: String =
                code[i + 4..].trim_start().bytes().take_while(|&c| is_ident(c)).map(char::from).collect();
            pending = Some(name);
            i += 4;
            continue;
        }
        i += 1;
    }
    open.into_iter().map(|(n, _)| n).collect()
}

/// Child modules a file declares in other files (`mod x;`).
fn children(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("mod ") {
        if i > 0 && is_ident(code.as_bytes()[i - 1]) {
            continue;
        }
        let rest = code[i + 4..].trim_start();
        let name: String = rest.bytes().take_while(|&c| is_ident(c)).map(char::from).collect();
        if !name.is_empty() && rest[name.len()..].trim_start().starts_with(';') {
            out.insert(name);
        }
    }
    out
}

/// Expands a `use` tree (`crate::a::{b, c::{d, e}}`) into full paths.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap_or(&tree).to_string()];
    };
    let prefix = &tree[..open];
    let inner = tree[open + 1..].strip_suffix('}').unwrap_or(&tree[open + 1..]);
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |e| format!("{prefix}{e}")))
        .collect()
}

/// The paths one file names, made absolute, each with its line.
fn named_paths(s: &Source, modules: &BTreeSet<Module>) -> Vec<Named> {
    let code = &s.code;
    let b = code.as_bytes();
    let kids = children(code);
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut raw: Vec<(String, usize)> = Vec::new();
    let mut uses: Vec<(usize, usize)> = Vec::new();
    // `use` trees.
    for (i, _) in code.match_indices("use ") {
        if i > 0 && (is_ident(b[i - 1]) || b[i - 1] == b':') {
            continue;
        }
        let end = code[i..].find(';').map_or(code.len(), |n| i + n);
        uses.push((i, end));
        for p in expand(&code[i + 4..end]) {
            raw.push((p, i));
        }
    }
    // Paths in expressions and types: anything starting `crate::`, `super::`,
    // `self::` or a child module's name followed by `::`.
    let mut i = 0;
    while i < b.len() {
        if let Some(&(_, end)) = uses.iter().find(|(from, to)| (*from..*to).contains(&i)) {
            i = end;
            continue;
        }
        if is_ident(b[i]) && (i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b':')) {
            let end = i + b[i..].iter().take_while(|&&c| is_ident(c) || c == b':').count();
            let word = code[i..end].trim_end_matches(':');
            let first = word.split("::").next().unwrap_or("");
            if word.contains("::") && (matches!(first, "crate" | "super" | "self") || kids.contains(first)) {
                raw.push((word.to_string(), i));
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    let mut out = Vec::new();
    for (path, at) in raw {
        let segs: Vec<&str> = path.split("::").filter(|x| !x.is_empty() && *x != "*").collect();
        let here: Vec<String> = s.module.iter().cloned().chain(inline_modules(code, at)).collect();
        let mut full: Vec<String> = match segs.first() {
            Some(&"crate") => Vec::new(),
            Some(&"super") | Some(&"self") => here.clone(),
            Some(first) if kids.contains(*first) => s.module.clone(),
            _ => continue,
        };
        let mut rest = &segs[..];
        if segs.first() == Some(&"crate") || segs.first() == Some(&"self") {
            rest = &segs[1..];
        }
        while rest.first() == Some(&"super") {
            full.pop();
            rest = &rest[1..];
        }
        full.extend(rest.iter().map(|x| x.to_string()));
        // The deepest prefix that is a module file.
        let mut target = full.clone();
        while !modules.contains(&target) {
            target.pop();
        }
        out.push(Named { full, target, line: line_of(at) });
    }
    out
}

/// Tarjan's strongly connected components, each with more than one module.
fn cycles(graph: &BTreeMap<Module, BTreeMap<Module, String>>) -> Vec<Vec<Module>> {
    struct T<'a> {
        g: &'a BTreeMap<Module, BTreeMap<Module, String>>,
        index: BTreeMap<Module, usize>,
        low: BTreeMap<Module, usize>,
        stack: Vec<Module>,
        on: BTreeSet<Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit(t: &mut T, v: &Module) {
        let n = t.index.len();
        t.index.insert(v.clone(), n);
        t.low.insert(v.clone(), n);
        t.stack.push(v.clone());
        t.on.insert(v.clone());
        let next: Vec<Module> = t.g.get(v).map(|e| e.keys().cloned().collect()).unwrap_or_default();
        for w in next {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let l = t.low[&v.clone()].min(t.low[&w]);
                t.low.insert(v.clone(), l);
            } else if t.on.contains(&w) {
                let l = t.low[v].min(t.index[&w]);
                t.low.insert(v.clone(), l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(&w);
                let done = &w == v;
                scc.push(w);
                if done {
                    break;
                }
            }
            if scc.len() > 1 {
                t.out.push(scc);
            }
        }
    }
    let mut t =
        T { g: graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: vec![], on: BTreeSet::new(), out: vec![] };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// One cycle through `start` inside its component, as a path of modules.
fn one_cycle(graph: &BTreeMap<Module, BTreeMap<Module, String>>, scc: &[Module]) -> Vec<Module> {
    let inside: BTreeSet<&Module> = scc.iter().collect();
    let start = scc.iter().min().expect("a component");
    // Breadth-first from start back to start.
    let mut prev: BTreeMap<Module, Module> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    while let Some(v) = queue.pop_front() {
        for w in graph.get(&v).map(|e| e.keys()).into_iter().flatten() {
            if !inside.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![v.clone()];
                let mut at = v.clone();
                while let Some(p) = prev.get(&at) {
                    path.push(p.clone());
                    at = p.clone();
                }
                path.reverse();
                path.push(start.clone());
                return path;
            }
            if !prev.contains_key(w) && w != start {
                prev.insert(w.clone(), v.clone());
                queue.push_back(w.clone());
            }
        }
    }
    scc.to_vec()
}

#[test]
fn imports_go_one_way() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&crates)
        .expect("read the crates folder")
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() > 5, "found only {} crates under {}", dirs.len(), crates.display());
    let mut wrong = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().expect("a crate folder").to_string_lossy().into_owned();
        let files = sources(&dir.join("src"));
        let modules: BTreeSet<Module> = files.iter().map(|f| f.module.clone()).collect();
        let mut graph: BTreeMap<Module, BTreeMap<Module, String>> = BTreeMap::new();
        for f in &files {
            graph.entry(f.module.clone()).or_default();
            for n in named_paths(f, &modules) {
                // Within one file, or a module naming its own ancestor: not an edge.
                if n.target == f.module || f.module.starts_with(&n.target) {
                    continue;
                }
                let where_ = format!("crates/{name}/{}:{} names {}", f.shown, n.line, show(&n.full));
                graph.get_mut(&f.module).expect("added above").entry(n.target.clone()).or_insert(where_);
            }
        }
        for scc in cycles(&graph) {
            let path = one_cycle(&graph, &scc);
            let steps: Vec<String> = path.windows(2).map(|w| graph[&w[0]][&w[1]].clone()).collect();
            let names: Vec<String> = path.iter().map(|m| show(m)).collect();
            let mut members: Vec<String> = scc.iter().map(|m| show(m)).collect();
            members.sort();
            wrong.push(format!(
                "cycle in crates/{name}: {} (the circle joins {}):\n    {}",
                names.join(" → "),
                members.join(", "),
                steps.join("\n    ")
            ));
        }
    }
    assert!(wrong.is_empty(), "imports inside a crate must go one way:\n  {}", wrong.join("\n  "));
}

#[test]
fn the_reader_sees_paths() {
    // The reader itself, on a small made-up file: comments and strings are
    // not paths, `super` inside `mod tests` is the file's own module, use trees
    // expand, and a child module's path counts.
    let code = blank(
        "//! crate::guard::x in a comment\nmod kid;\nuse crate::a::{b::{C, D}, e};\nfn f() { let s = \"crate::report\"; \
         let c = '\"'; kid::go(); crate::z::w(); }\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use \
         super::super::q::R;\n}\n",
    );
    let s = Source { module: vec!["p".into(), "m".into()], shown: "src/p/m.rs".into(), code };
    let modules: BTreeSet<Module> = [
        vec![],
        vec!["a".into()],
        vec!["a".into(), "b".into()],
        vec!["z".into()],
        vec!["p".into()],
        vec!["p".into(), "m".into()],
        vec!["p".into(), "m".into(), "kid".into()],
        vec!["p".into(), "q".into()],
    ]
    .into_iter()
    .collect();
    let got: Vec<(String, String, usize)> =
        named_paths(&s, &modules).into_iter().map(|n| (show(&n.full), show(&n.target), n.line)).collect();
    let want = [
        ("crate::a::b::C", "crate::a::b", 3),
        ("crate::a::b::D", "crate::a::b", 3),
        ("crate::a::e", "crate::a", 3),
        ("crate::p::m", "crate::p::m", 7),
        ("crate::p::q::R", "crate::p::q", 8),
        ("crate::p::m::kid::go", "crate::p::m::kid", 4),
        ("crate::z::w", "crate::z", 4),
    ];
    let want: Vec<(String, String, usize)> = want.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), *c)).collect();
    assert_eq!(got, want);
}
