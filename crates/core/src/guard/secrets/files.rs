//! Files that are secrets (issue 18): their outputs are never sent to the
//! judge, whatever they hold.
//!
//! For: telling, from a tool call's arguments, whether it reads such a file
//! (`secretFiles`: `.env*`, keys, credentials; the default list is in
//! `settings`). Not for: secrets inside other outputs (`secrets`).

/// Whether a tool call reads a file that is a secret (`secretFiles`): a
/// `read` (or any tool) whose `path`-like argument names one, or a shell
/// command with one as a word. Returns the file's name.
pub fn secret_file(arguments: &serde_json::Value, patterns: &[String]) -> Option<String> {
    let serde_json::Value::Object(args) = arguments else { return None };
    for key in ["path", "file_path", "filePath", "file", "filename"] {
        if let Some(p) = args.get(key).and_then(|v| v.as_str()) {
            if let Some(name) = secret_name(p, patterns) {
                return Some(name);
            }
        }
    }
    let command = args.get("command").and_then(|v| v.as_str())?;
    command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')'))
        .map(|w| w.trim_matches(|c| matches!(c, '"' | '\'' | '`')))
        .find_map(|w| secret_name(w, patterns))
}

/// The file name of `path` when it matches one of `patterns`.
fn secret_name(path: &str, patterns: &[String]) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if name.is_empty() {
        return None;
    }
    patterns.iter().any(|p| glob(p.as_bytes(), name.as_bytes())).then(|| name.to_string())
}

/// `*` (any run of characters, `/` included) and `?` (one), nothing else; ASCII case ignored.
fn glob(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi].eq_ignore_ascii_case(&s[si])) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}
