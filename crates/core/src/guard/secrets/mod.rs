//! Secrets withheld from every request to the judge (issue 18; product.md
//! "Nothing secret leaves the machine").
//!
//! For: finding secrets in a text ([`Secrets::find`]: provider key formats,
//! private key blocks, JSON web tokens, credentials in URLs, `Authorization`
//! headers, passwords and generic assignments with an entropy floor, and the
//! user's own `secretPatterns`), writing a text with each one as a typed
//! placeholder (`[secret: aws-access-key]`), doing that to every string of a
//! pass's requests ([`withhold`]), and telling files that are secrets by name
//! ([`secret_file`]). Not for: what stays in the window (the local original:
//! nothing here touches an entry, a draft or `recall`), or deciding what to
//! ask the judge.
//!
//! How it stays fast (a pass carries a megabyte; product.md gives it 15 ms):
//! `regex-lite` is linear but several times slower than V8 per byte, so the
//! patterns of `rules` never scan a whole output. One pass over the bytes
//! finds tokens (runs of `[A-Za-z0-9_\-+/.~]`) and `://`; only a token that
//! starts with a provider's prefix, follows an assignment to a name that
//! holds a keyword, or follows an `Authorization` scheme, and only a URL with
//! `@` in its authority, gets its pattern run, on a window of its line. This
//! is gitleaks' own design (a keyword prefilter, then the rule's pattern),
//! with the token's start in place of a keyword search. The user's patterns
//! have no prefilter: each scans the whole text (GUARD.md says what they cost).

pub mod files;
pub mod rules;

pub use files::secret_file;

use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

use regex_lite::Regex;

use crate::guard::classify::{ClassifierContext, Ordered, RunFields, State};
use crate::guard::settings::compile_secret_pattern;

/// One secret in a text: its byte range and its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub start: usize,
    pub end: usize,
    pub kind: &'static str,
}

/// The kind of a user's pattern.
pub const CUSTOM: &str = "custom";

/// The built-in patterns compiled, once per thread (the wasm module has one).
struct Compiled {
    rules: Vec<Option<Regex>>,
    private_key: Option<Regex>,
    generic: Option<Regex>,
}

thread_local! {
    static COMPILED: Rc<Compiled> = Rc::new(Compiled {
        rules: rules::RULES.iter().map(|r| rules::compile(r.pattern)).collect(),
        private_key: rules::compile(rules::PRIVATE_KEY),
        generic: rules::compile(rules::GENERIC),
    });
}

/// The secret finder: the built-in rules and the user's patterns.
pub struct Secrets {
    compiled: Rc<Compiled>,
    custom: Vec<Regex>,
}

impl Secrets {
    /// With the user's patterns (`secretPatterns`, validated by `settings`;
    /// one that does not compile here is left out).
    pub fn new(custom: &[String]) -> Secrets {
        Secrets {
            compiled: COMPILED.with(Rc::clone),
            custom: custom.iter().filter_map(|p| compile_secret_pattern(p).ok()).collect(),
        }
    }

    /// Every secret in `text`, in order, none overlapping.
    pub fn find(&self, text: &str) -> Vec<Found> {
        let mut found = Scan { text, bytes: text.as_bytes(), c: &self.compiled, out: Vec::new() }.run();
        for re in &self.custom {
            for m in re.find_iter(text) {
                if m.end() > m.start() {
                    found.push(Found { start: m.start(), end: m.end(), kind: CUSTOM });
                }
            }
        }
        merge(found)
    }
}

/// Sorted by start; overlapping or touching secrets become one (the first's kind).
fn merge(mut found: Vec<Found>) -> Vec<Found> {
    found.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    let mut out: Vec<Found> = Vec::with_capacity(found.len());
    for f in found {
        match out.last_mut() {
            Some(last) if f.start <= last.end => last.end = last.end.max(f.end),
            _ => out.push(f),
        }
    }
    out
}

/// What each byte can be to the scan, as bits of one table: the hot loop
/// (every byte of a megabyte) and each token's first look run at the
/// wasm's `opt-level = "z"`, where a `matches!` or an iterator adapter may
/// stay a call per byte; a table lookup does not.
const TOKEN: u8 = 1; // what a key, a token or a password of the formats is made of: [A-Za-z0-9_\-+/.~]
const SKIP: u8 = 2; // between an operator and its value: quotes, spaces, `=` (gitleaks: [`'"\s=])
const SPACE: u8 = 4; // a space or a tab
const OPERATOR: u8 = 8; // `=`, `:`, `>`, `,`
const PREFIX: u8 = 16; // the first byte of a provider prefix (`rules::PREFIX_STARTS`)
const WORD_END: u8 = 32; // the last byte of `bearer`, `basic`, `token`, `authorization:`, ` is`

const fn class_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut k = 0;
        if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'+' | b'/' | b'.' | b'~') {
            k |= TOKEN;
        }
        if matches!(c, b'`' | b'\'' | b'"' | b' ' | b'\t' | b'=') {
            k |= SKIP;
        }
        if matches!(c, b' ' | b'\t') {
            k |= SPACE;
        }
        if matches!(c, b'=' | b':' | b'>' | b',') {
            k |= OPERATOR;
        }
        let mut p = 0;
        while p < rules::PREFIX_STARTS.len() {
            if rules::PREFIX_STARTS[p] == c {
                k |= PREFIX;
            }
            p += 1;
        }
        if matches!(c | 0x20, b'r' | b'c' | b'n' | b's') || c == b':' {
            k |= WORD_END;
        }
        t[b] = k;
        b += 1;
    }
    t
}
const CLASS: [u8; 256] = class_table();

fn is(b: u8, class: u8) -> bool {
    CLASS[b as usize] & class != 0
}

/// How far a candidate looks around it on its line (gitleaks' generic
/// pattern spans at most 50 + 20 + 3 + 3 + 5 + 150 characters).
const LINE_BACK: usize = 256;
const LINE_AHEAD: usize = 512;

/// The shortest token worth a look: the shortest secret of `rules` (a
/// password) is 6 characters.
const MIN_TOKEN: usize = 6;

struct Scan<'a> {
    text: &'a str,
    bytes: &'a [u8],
    c: &'a Compiled,
    out: Vec<Found>,
}

impl Scan<'_> {
    fn run(mut self) -> Vec<Found> {
        let b = self.bytes;
        let mut i = 0;
        while i < b.len() {
            if !is(b[i], TOKEN) {
                if b[i] == b':' && b.get(i + 1) == Some(&b'/') && b.get(i + 2) == Some(&b'/') {
                    self.url(i);
                }
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && is(b[i], TOKEN) {
                i += 1;
            }
            if i - start >= MIN_TOKEN {
                if let Some(skip_to) = self.token(start, i) {
                    i = i.max(skip_to);
                }
            }
        }
        self.out
    }

    fn push(&mut self, start: usize, end: usize, kind: &'static str) {
        if end > start {
            self.out.push(Found { start, end, kind });
        }
    }

    /// The start and the end of `at`'s line, looking at most `LINE_BACK`
    /// bytes back and `LINE_AHEAD` ahead: a megabyte on one line (minified
    /// JSON) must not make each candidate read all of it.
    fn line(&self, at: usize) -> (usize, usize) {
        let b = self.bytes;
        let low = at.saturating_sub(LINE_BACK);
        let high = (at + LINE_AHEAD).min(b.len());
        let start = b[low..at].iter().rposition(|&c| c == b'\n').map_or(low, |p| low + p + 1);
        let end = b[at..high].iter().position(|&c| c == b'\n').map_or(high, |p| at + p);
        (floor_char(self.text, start), floor_char(self.text, end))
    }

    /// A token `[start, end)`. Returns where the scan goes on when the secret
    /// runs past the token (a private key block).
    fn token(&mut self, start: usize, end: usize) -> Option<usize> {
        let b = self.bytes;
        // A token after `//` (a URL's host or path) is tried from its first other byte.
        let mut s = start;
        while s < end && b[s] == b'/' {
            s += 1;
        }
        let len = end - s;
        // `-----BEGIN` may follow a JSON-escaped newline (`\n-----BEGIN`: the token starts at `n`).
        if len >= 10 && (b[s] == b'-' || b[s + 1] == b'-') {
            let p = if b[s] == b'-' { s } else { s + 1 };
            if b.get(p..p + 10) == Some(b"-----BEGIN".as_slice()) {
                return self.private_key(p);
            }
        }
        if len >= rules::PROVIDER_MIN && is(b[s], PREFIX) && self.provider(s, end) {
            return None;
        }
        // One look back, shared by the two rules that read what comes before
        // a token: over quotes, spaces and `=` (gitleaks: [`'"\s=]{0,5}) to
        // an operator, or to the word before the spaces. Most tokens stop
        // here (a word after a word), with no call and nothing read again.
        let mut j = start;
        let (mut n, mut spaces) = (0, 0);
        while j > 0 && n < 5 && is(b[j - 1], SKIP) {
            spaces += usize::from(is(b[j - 1], SPACE));
            j -= 1;
            n += 1;
        }
        let before = if j > 0 { b[j - 1] } else { b'\n' };
        let operator = is(before, OPERATOR) || (n > 0 && b[j] == b'=');
        // After spaces, the word before must be one of the few that introduce
        // a value: compared here, so that a word that merely ends in `r`, `c`,
        // `n` or `s` (most of them) costs no call.
        let ends = |w: &[u8]| {
            j >= w.len()
                && b[j - w.len()..j].eq_ignore_ascii_case(w)
                && (j == w.len() || !b[j - w.len() - 1].is_ascii_alphanumeric())
        };
        let word: Option<&'static [u8]> = if spaces > 0 && is(before, WORD_END) {
            [b"bearer".as_slice(), b"basic", b"token", b"authorization:", b"is"]
                .into_iter()
                .find(|w| w.last() == Some(&(before | 0x20)) && ends(w))
        } else {
            None
        };
        if !operator && word.is_none() {
            return None;
        }
        // "… is <value>" is the password rule's (`assignment`), the others a
        // header's, whose value follows the scheme after spaces only.
        if let Some(scheme) = word.filter(|w| *w != b"is" && spaces == n) {
            if self.authorization(start, end, j, scheme) {
                return None;
            }
        }
        // The value as gitleaks' generic pattern reads it ([\w.=-], `=` included).
        let mut v = end;
        while v < b.len() && v - start < 150 && (is(b[v], TOKEN) || b[v] == b'=') {
            v += 1;
        }
        // Shorter than any password, or all digits below gitleaks' 10 (a timestamp, an id): no rule.
        let digits = b[start..v].iter().all(u8::is_ascii_digit);
        if v - start >= rules::PASSWORD_MIN && !(digits && v - start < 10) {
            self.assignment(start, j, n, v - start >= 10);
        }
        None
    }

    /// A provider format whose prefix the token has.
    fn provider(&mut self, s: usize, end: usize) -> bool {
        let tok = &self.bytes[s..end];
        for (k, rule) in rules::RULES.iter().enumerate() {
            // Two bytes compared before a prefix is (every prefix has three or more).
            if !rule
                .prefixes
                .iter()
                .any(|p| p.as_bytes()[0] == tok[0] && p.as_bytes()[1] == tok[1] && tok.starts_with(p.as_bytes()))
            {
                continue;
            }
            let Some(re) = self.c.rules.get(k).and_then(Option::as_ref) else { continue };
            // The pattern may look one byte past the token (a `\b`), never across a line.
            let (_, line_end) = self.line(s);
            let window_end = floor_char(self.text, (end + 1).min(line_end));
            let Some(window) = self.text.get(s..window_end) else { continue };
            if let Some((a, z)) = secret_of(re, window) {
                if entropy(&window[a..z]) > rule.entropy || rule.entropy == 0.0 {
                    self.push(s + a, s + z, rule.kind);
                    return true;
                }
            }
        }
        false
    }

    /// A private key block from `-----BEGIN`: through its `END` line, or to
    /// the end of the text when the block was cut off (all of it is key).
    fn private_key(&mut self, start: usize) -> Option<usize> {
        let b = self.bytes;
        let header_end = find(&b[..(start + 130).min(b.len())], b"-----", start + 10)?;
        let header = self.text.get(start..header_end)?;
        if !header.to_ascii_uppercase().contains("PRIVATE KEY") {
            return None;
        }
        let end = match find(b, b"-----END", header_end + 5) {
            Some(e) => {
                let close = find(&b[..(e + 130).min(b.len())], b"-----", e + 8).map_or(b.len(), |c| c + 5);
                // gitleaks' pattern confirms a whole block; a block it does not match is withheld still.
                let window = self.text.get(start..floor_char(self.text, close)).unwrap_or("");
                match self.c.private_key.as_ref().and_then(|re| re.find(window)) {
                    Some(m) => start + m.end(),
                    None => close,
                }
            }
            None => b.len(),
        };
        self.push(start, end, "private-key");
        Some(end)
    }

    /// The token after an `Authorization` scheme (`Bearer`, `Basic`, `Token`),
    /// or right after `Authorization:`.
    /// `scheme` is the word `token` found before the spaces that end at `j`.
    fn authorization(&mut self, start: usize, end: usize, j: usize, scheme: &[u8]) -> bool {
        let b = self.bytes;
        let value = self.text.get(start..end).unwrap_or("");
        if value.len() < rules::AUTH_MIN || letters_only(value) || entropy(value) <= rules::AUTH_ENTROPY {
            return false;
        }
        // `token` alone is a common word: only in a header, after `Authorization`.
        if scheme == b"token" && !contains_ignore_case(&b[self.line(start).0..j], b"authorization") {
            return false;
        }
        let end = end + self.bytes[end..].iter().take_while(|&&c| c == b'=').count();
        self.push(start, end, "authorization");
        true
    }

    /// A value assigned to a name that holds a keyword: gitleaks'
    /// `generic-api-key`, else a password.
    /// `j` is where the look back over `n` quotes, spaces and `=` stopped
    /// (`token`); `long` whether the value may be gitleaks' (10 or more).
    fn assignment(&mut self, start: usize, mut j: usize, n: usize, long: bool) {
        let b = self.bytes;
        let assigns = matches!(b.get(j.wrapping_sub(1)), Some(b'=' | b':')) || (n > 0 && b.get(j) == Some(&b'='));
        let operator = assigns || matches!(b.get(j.wrapping_sub(1)), Some(b'>' | b','));
        // In prose, "the password is …" assigns too (a password only: "the key is" is a provider's rule's).
        let prose = !operator && n > 0 && j >= 3 && &b[j - 3..j] == b" is";
        if !operator && !prose {
            return;
        }
        if prose {
            j -= 3;
        }
        // The name: back over the operator (`:=`, `=>`, `||`), quotes and
        // spaces (gitleaks: [\s'"]{0,3}), then over gitleaks' name characters
        // ([\w.-]{0,50} and [ \t\w.-]{0,20}). Nothing is allocated until a
        // keyword is in it: most candidates (a timestamp's `12:05`) stop here.
        let mut k = j;
        let mut m = 0;
        while k > 0
            && m < 7
            && matches!(b[k - 1], b'=' | b':' | b'>' | b'|' | b'?' | b',' | b' ' | b'\t' | b'"' | b'\'')
        {
            k -= 1;
            m += 1;
        }
        let name_end = k;
        // gitleaks: the keyword ends within 20 characters of the operator's quotes.
        while k > 0
            && name_end - k < 32
            && (b[k - 1].is_ascii_alphanumeric() || matches!(b[k - 1], b'_' | b'.' | b'-' | b' ' | b'\t'))
        {
            k -= 1;
        }
        let name_bytes = &b[k..j];
        let (generic, pass) = keywords_in(name_bytes);
        let generic = generic && !prose && long;
        if !generic && !pass {
            return;
        }
        let name_start = k;
        let name = lower(name_bytes);
        let password = password_name(&name);
        if !generic && !password {
            return;
        }
        let (line_start, line_end) = self.line(start);
        // A value in quotes, or on a line that only assigns it (`.env`, YAML,
        // JSON), is a literal; an unquoted one inside code may be an expression
        // (`token=raw.token`, `isOAuthToken:isOAuthToken2`), which is not a secret.
        // The quote that opens the value, if one does (right before it).
        let quote = b.get(start.wrapping_sub(1)).copied().filter(|c| matches!(c, b'"' | b'\'' | b'`'));
        let quoted = quote.is_some() || b[j..start].iter().any(|&c| matches!(c, b'"' | b'\'' | b'`'));
        let literal = quoted || prose || self.config_line(line_start, j);
        let kind = if name.contains("aws") && name.contains("secret") {
            "aws-secret-key"
        } else if password {
            "password"
        } else {
            "generic-secret"
        };
        if generic {
            let window_end = floor_char(self.text, (start + 200).min(line_end));
            if let (Some(re), Some(window)) = (self.c.generic.as_ref(), self.text.get(name_start..window_end)) {
                for caps in re.captures_iter(window) {
                    let Some(g) = caps.get(1) else { continue };
                    let (a, z) = (name_start + g.start(), name_start + g.end());
                    if a <= start && z > start {
                        let secret = &window[g.start()..g.end()];
                        if entropy(secret) > rules::GENERIC_ENTROPY && !allowed(secret) && !expression(secret, literal)
                        {
                            self.push(a, z, kind);
                            return;
                        }
                        break;
                    }
                }
            }
            // A literal whose characters the pattern's class stops short of
            // (`SECRET_KEY="django-insecure-7x#k!p…"`): the whole literal, one
            // word of 10 or more characters, under the same floor.
            let value = self.literal_value(start, line_end, quote);
            if literal
                && !prose
                && value.len() >= 10
                && !matches!(value.as_bytes().first(), Some(b'/' | b'.' | b'~'))
                && !value.contains([' ', '\t'])
                && entropy(value) > rules::GENERIC_ENTROPY
                && !allowed(value)
                && !expression(value, literal)
            {
                self.push(start, start + value.len(), kind);
                return;
            }
        }
        if password {
            // The value: the quoted literal whole (a passphrase may hold spaces), else up to a space,
            // a quote or a separator.
            let value = match quote {
                Some(_) => self.literal_value(start, line_end, quote),
                None => {
                    let z = start
                        + b[start..line_end]
                            .iter()
                            .position(|&c| matches!(c, b' ' | b'\t' | b'\r' | b'"' | b'\'' | b'`' | b';' | b','))
                            .unwrap_or(line_end - start);
                    self.text.get(start..floor_char(self.text, z)).unwrap_or("")
                }
            };
            let path = matches!(value.as_bytes().first(), Some(b'/' | b'.' | b'~'));
            // `DB_PASSWORD=supersecret` in a `.env` is a password though it is one word;
            // `password: string` in a type is not.
            let word_ok = assigns
                && (quoted || (literal && !prose))
                && value.bytes().all(|c| c.is_ascii_alphabetic())
                && !type_word(value);
            if value.len() >= rules::PASSWORD_MIN
                && !path
                && (word_ok || !allowed(value))
                && !expression(value, literal)
                && entropy(value) > rules::PASSWORD_ENTROPY
            {
                self.push(start, start + value.len(), "password");
            }
        }
    }

    /// A literal value from `start`: up to its closing `quote` (at most 200
    /// bytes, not past the line), or up to a space, `,` or `;` when it has none.
    fn literal_value(&self, start: usize, line_end: usize, quote: Option<u8>) -> &str {
        let b = self.bytes;
        let high = line_end.min(start + 200);
        let z = match quote {
            Some(q) => b[start..high].iter().position(|&c| c == q).map_or(start, |p| start + p),
            None => {
                start
                    + b[start..high]
                        .iter()
                        .position(|&c| matches!(c, b' ' | b'\t' | b'\r' | b',' | b';'))
                        .unwrap_or(high - start)
            }
        };
        self.text.get(start..floor_char(self.text, z)).unwrap_or("")
    }

    /// Whether the line holds only the assignment whose operator ends at
    /// `op_end`: before its name nothing but spaces, quotes, brackets, a list
    /// marker or `export` (a `.env` line, YAML, JSON).
    fn config_line(&self, line_start: usize, op_end: usize) -> bool {
        let b = self.bytes;
        let mut k = op_end;
        while k > line_start
            && matches!(b[k - 1], b'=' | b':' | b'>' | b',' | b'|' | b'?' | b' ' | b'\t' | b'"' | b'\'' | b'`')
        {
            k -= 1;
        }
        while k > line_start && (b[k - 1].is_ascii_alphanumeric() || matches!(b[k - 1], b'_' | b'.' | b'-' | b'$')) {
            k -= 1;
        }
        let prefix = self.text.get(line_start..k).unwrap_or("").trim_start();
        let prefix = prefix.strip_prefix("export ").or_else(|| prefix.strip_prefix("set ")).unwrap_or(prefix);
        prefix.bytes().all(|c| matches!(c, b' ' | b'\t' | b'"' | b'\'' | b'{' | b'[' | b',' | b'-'))
    }

    /// A URL at its `://`: a password in its user information (or a long
    /// token as the user), or a Slack webhook.
    fn url(&mut self, colon: usize) {
        let b = self.bytes;
        let from = colon + 3;
        let high = (from + LINE_AHEAD).min(b.len());
        let to = from
            + b[from..high]
                .iter()
                .position(|&c| {
                    matches!(
                        c,
                        b'/' | b'?'
                            | b'#'
                            | b' '
                            | b'\t'
                            | b'\n'
                            | b'\r'
                            | b'"'
                            | b'\''
                            | b'`'
                            | b'<'
                            | b'>'
                            | b')'
                            | b']'
                            | b'}'
                    )
                })
                .unwrap_or(high - from);
        let Some(at) = b[from..to].iter().rposition(|&c| c == b'@').map(|p| from + p) else { return };
        match b[from..at].iter().position(|&c| c == b':').map(|p| from + p) {
            Some(c) => {
                let pass = self.text.get(c + 1..at).unwrap_or("");
                if !pass.is_empty() && !placeholder(pass) {
                    self.push(c + 1, at, "url-credentials");
                }
            }
            None => {
                let user = self.text.get(from..at).unwrap_or("");
                if user.len() >= 16 && entropy(user) > 3.0 && !letters_only(user) {
                    self.push(from, at, "url-credentials");
                }
            }
        }
    }
}

/// Whether a name holds one of gitleaks' generic keywords
/// (`rules::GENERIC_KEYWORDS`), and whether it holds `pass` or `pwd`: one
/// look at each byte, a comparison only at a keyword's first letter.
fn keywords_in(name: &[u8]) -> (bool, bool) {
    let (mut generic, mut pass) = (false, false);
    for i in 0..name.len() {
        let at = |w: &[u8]| name.len() - i >= w.len() && name[i..i + w.len()].eq_ignore_ascii_case(w);
        match name[i] | 0x20 {
            b'a' => generic |= at(b"access") || at(b"api") || at(b"auth"),
            b'c' => generic |= at(b"credential") || at(b"creds"),
            b'k' => generic |= at(b"key"),
            b's' => generic |= at(b"secret"),
            b't' => generic |= at(b"token"),
            b'p' => {
                let p = at(b"pass") || at(b"pwd");
                pass |= p;
                generic |= p && (at(b"passwd") || at(b"password"));
            }
            _ => {}
        }
    }
    (generic, pass)
}

/// Whether `hay` holds `word` (lower case), ASCII case ignored.
fn contains_ignore_case(hay: &[u8], word: &[u8]) -> bool {
    hay.windows(word.len()).any(|w| w.eq_ignore_ascii_case(word))
}

/// Whether the name right before an operator (after quotes and spaces) is a
/// password's: it holds `passw` or `pwd`, or ends with `pass` (`DB_PASS`),
/// and not `passed` or `bypass`-like words.
fn password_name(before: &str) -> bool {
    let t = before.trim_end_matches([' ', '\t', '"', '\'', ':', '=', '>', ',', '?', '|']);
    let start = t
        .char_indices()
        .rfind(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .map_or(0, |(p, c)| p + c.len_utf8());
    let name = &t[start..];
    rules::PASSWORD_KEYWORDS.iter().any(|k| name.contains(k)) || (name.ends_with("pass") && !name.ends_with("bypass"))
}

/// The secret of a pattern's first match: its first capture group, else the whole match.
fn secret_of(re: &Regex, window: &str) -> Option<(usize, usize)> {
    let caps = re.captures(window)?;
    let m = caps.get(1).or_else(|| caps.get(0))?;
    Some((m.start(), m.end()))
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from >= hay.len() {
        return None;
    }
    hay[from..].windows(needle.len()).position(|w| w == needle).map(|p| from + p)
}

/// The largest char boundary at or before `i`.
fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn lower(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_ascii_lowercase()
}

/// Shannon entropy in bits per character, as gitleaks computes it
/// (`shannonEntropy`: characters counted, divided by the byte length).
pub fn entropy(s: &str) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts: Vec<(char, u32)> = Vec::new();
    for ch in s.chars() {
        match counts.iter_mut().find(|(c, _)| *c == ch) {
            Some((_, n)) => *n += 1,
            None => counts.push((ch, 1)),
        }
    }
    let len = s.len() as f64;
    counts.iter().map(|&(_, n)| f64::from(n) / len).map(|p| -p * p.log2()).sum()
}

/// Only letters, `_`, `.` and `-`: a name in code, not a secret (gitleaks'
/// `generic-api-key` allowlist `^[a-zA-Z_.-]+$`).
fn letters_only(s: &str) -> bool {
    s.bytes().all(|c| c.is_ascii_alphabetic() || matches!(c, b'_' | b'.' | b'-'))
}

/// An expression in code rather than a value: names joined by code's
/// punctuation (`raw.token`, `i=n.walkTokens`, `usage.cacheWrite=0`,
/// `Buffer2.from(password)`), a part at most a short number. A name is made of words (`isOAuthToken2`: `is`, `OAuth`,
/// `Token`, `2`) 2.5 characters long on average; a random token's "words"
/// are one or two characters (`a8f9d7e6`, `aB3xK9mQ`).
fn code_like(s: &str) -> bool {
    let ident = |p: &str| {
        let mut c = p.bytes();
        c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == b'_' || f == b'$')
            && c.all(|x| x.is_ascii_alphanumeric() || x == b'_' || x == b'$')
            && (p.len() <= 2 || word_length(p) >= 2.5)
    };
    let number = |p: &str| !p.is_empty() && p.len() <= 4 && p.bytes().all(|x| x.is_ascii_digit());
    let name_byte = |x: u8| x.is_ascii_alphanumeric() || x == b'_' || x == b'$';
    // Code's punctuation only (`a?.b`, `f(x)`, `a||b`, `x[0]`): a `@`, `#` or `%` is a password's.
    let punctuation = |x: u8| b".=?()[]!&|+-*/:<>{}".contains(&x);
    if !s.bytes().all(|x| name_byte(x) || punctuation(x)) {
        return false;
    }
    let parts: Vec<&str> = s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$')).collect();
    if !(parts.iter().any(|p| ident(p)) && parts.iter().all(|p| p.is_empty() || ident(p) || number(p))) {
        return false;
    }
    // A member access or a call (`raw.token`, `f(x)`), or one name of several
    // words (`isOAuthToken2`); a lone word and a number (`hunter2`) may be a password.
    s.contains(['.', '(', '+', '=', '?', '|', '&', '[', ']']) || (parts.len() == 1 && camel_or_snake(s))
}

/// The average length of a name's words: split at `_` and `$`, between
/// letters and digits, and before an upper-case letter that follows a
/// lower-case one.
fn word_length(name: &str) -> f64 {
    let (mut words, mut chars) = (0usize, 0usize);
    let mut prev: Option<u8> = None;
    for c in name.bytes() {
        if c == b'_' || c == b'$' {
            prev = None;
            continue;
        }
        let new_word = match prev {
            None => true,
            Some(p) => p.is_ascii_digit() != c.is_ascii_digit() || (p.is_ascii_lowercase() && c.is_ascii_uppercase()),
        };
        words += usize::from(new_word);
        chars += 1;
        prev = Some(c);
    }
    if words == 0 {
        0.0
    } else {
        chars as f64 / words as f64
    }
}

/// Whether a value is an expression of code, not a secret: code-like, and
/// either unquoted in code or a member access or call even where a literal
/// would be (`password: process.env.DB_PASSWORD` in an object).
fn expression(value: &str, literal: bool) -> bool {
    code_like(value) && (!literal || value.contains(['.', '(']))
}

/// A type or a keyword where a password's value would be (`password: string`).
fn type_word(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    [
        "string",
        "number",
        "boolean",
        "null",
        "undefined",
        "true",
        "false",
        "required",
        "optional",
        "object",
        "secret",
        "password",
        "none",
        "empty",
        "changeme",
    ]
    .contains(&l.as_str())
}

/// A name of words joined as code joins them (`isOAuthToken2`, `max_tokens`),
/// with few digits: a random token of lower-case letters and digits
/// (`nzcqaxx439qurjjq…`) has neither a case change nor an underscore, and a
/// lone word with a number (`hunter2`) is not a name either.
fn camel_or_snake(s: &str) -> bool {
    let b = s.as_bytes();
    let joined = b.windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
        || b.windows(3).any(|w| w[0].is_ascii_alphabetic() && w[1] == b'_' && w[2].is_ascii_alphabetic());
    joined && b.iter().filter(|c| c.is_ascii_digit()).count() <= 3
}

/// A value that stands for a secret rather than being one: a variable or a
/// template (`$X`, `${X}`, `{{ x }}`, `%X%`, `<x>`, `ctrl+${key}`), a mask (`****`, `xxxx`).
fn placeholder(s: &str) -> bool {
    let b = s.as_bytes();
    matches!(b.first(), Some(b'$' | b'<' | b'%'))
        || s.contains("${")
        || s.contains("{{")
        || b.iter().all(|&c| c == b'*' || c == b'x' || c == b'X')
}

/// gitleaks' allowlists that apply to a value: names in code, variables and
/// templates, `true`, `false`, `null`.
fn allowed(s: &str) -> bool {
    letters_only(s) || placeholder(s) || matches!(s.to_ascii_lowercase().as_str(), "true" | "false" | "null")
}

/// `text` with each secret as `[secret: <kind>]`.
pub fn redacted(text: &str, found: &[Found]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in found {
        out.push_str(text.get(at..f.start).unwrap_or(""));
        push_placeholder(&mut out, f.kind);
        at = f.end;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    out
}

/// For the corpus tests and the benchmark (the extension sends nothing
/// through it): `text` as a request would carry it, and what was found, as
/// `{"text": "…", "found": [[kind, secret], …]}`; `patterns` is the JSON text
/// of `secretPatterns` (anything but an array of strings reads as none).
pub fn withhold_text_json(text: &str, patterns: &str) -> String {
    let custom: Vec<String> = serde_json::from_str(patterns).unwrap_or_default();
    let found = Secrets::new(&custom).find(text);
    let list: Vec<(&str, &str)> = found.iter().map(|f| (f.kind, text.get(f.start..f.end).unwrap_or(""))).collect();
    serde_json::json!({ "text": redacted(text, &found), "found": list }).to_string()
}

fn push_placeholder(out: &mut String, kind: &str) {
    out.push_str("[secret: ");
    out.push_str(kind);
    out.push(']');
}

/// What a pass withheld: secrets by kind (each distinct value once), and
/// the outputs not sent because their file is a secret.
#[derive(Debug, Clone, Default)]
pub struct Withheld {
    /// `(kind, count)`, in the order first seen.
    pub kinds: Vec<(String, usize)>,
    /// The labels of outputs of secret files (``read `.env` ``).
    pub files: Vec<String>,
    seen: Vec<u64>,
}

/// Equal when they say the same (the values seen are a pass's own memory).
impl PartialEq for Withheld {
    fn eq(&self, other: &Withheld) -> bool {
        self.kinds == other.kinds && self.files == other.files
    }
}

impl serde::Serialize for Withheld {
    /// `{"secrets": {"<kind>": n, …}, "files": ["read `.env`", …]}`, each part only when it has any.
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = ser.serialize_map(None)?;
        if !self.kinds.is_empty() {
            let kinds: serde_json::Map<String, serde_json::Value> =
                self.kinds.iter().map(|(k, n)| (k.clone(), serde_json::Value::from(*n))).collect();
            m.serialize_entry("secrets", &kinds)?;
        }
        if !self.files.is_empty() {
            m.serialize_entry("files", &self.files)?;
        }
        m.end()
    }
}

impl Withheld {
    /// As a record holds it (see `Serialize`); what is not of that shape is left out.
    pub fn from_value(v: &serde_json::Value) -> Withheld {
        let kinds = v
            .get("secrets")
            .and_then(serde_json::Value::as_object)
            .map(|m| m.iter().filter_map(|(k, n)| Some((k.clone(), usize::try_from(n.as_u64()?).ok()?))).collect())
            .unwrap_or_default();
        let files = v
            .get("files")
            .and_then(serde_json::Value::as_array)
            .map(|a| a.iter().filter_map(|f| f.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        Withheld { kinds, files, seen: Vec::new() }
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty() && self.files.is_empty()
    }

    /// How many secrets in all.
    pub fn secrets(&self) -> usize {
        self.kinds.iter().map(|(_, n)| n).sum()
    }

    fn count(&mut self, kind: &str, value: &str) {
        let mut h = crate::text::FNV_OFFSET;
        for &b in kind.as_bytes().iter().chain([0u8].iter()).chain(value.as_bytes()) {
            h = crate::text::fnv_step(h, b);
        }
        if self.seen.contains(&h) {
            return;
        }
        self.seen.push(h);
        match self.kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, n)) => *n += 1,
            None => self.kinds.push((kind.to_string(), 1)),
        }
    }
}

/// Withholds every secret from every string of `requests`, in place; the
/// chunks of a large output are read as one text (a key block cut across two
/// chunks is found whole), and a request whose chunks changed is marked so
/// that they cross as strings (`Chunks::withheld`), never as ranges of the
/// extension's text. Chunk ids, questions and everything else stay.
pub fn withhold(requests: &mut [ClassifierContext], secrets: &Secrets, withheld: &mut Withheld) {
    let w = RefCell::new(std::mem::take(withheld));
    let fix = |s: &mut String| {
        let found = secrets.find(s);
        if found.is_empty() {
            return;
        }
        for f in &found {
            w.borrow_mut().count(f.kind, s.get(f.start..f.end).unwrap_or(""));
        }
        *s = redacted(s, &found);
    };
    // The output texts already scanned, by their shared text's address; the
    // run's fields, which every request of a pass repeats, scanned once.
    let mut outputs: Vec<(*const u8, Vec<Found>)> = Vec::new();
    let mut runs: Option<(RunFields, RunFields)> = None;
    let mut run_once = |run: &mut RunFields| match &runs {
        Some((seen, done)) if seen == run => *run = done.clone(),
        _ => {
            let seen = run.clone();
            run_fields(run, &fix);
            runs = Some((seen, run.clone()));
        }
    };
    for r in requests.iter_mut() {
        match &mut r.state {
            State::Large(s) => {
                run_once(&mut s.run);
                for c in s.later_tool_calls.iter_mut().flatten() {
                    fix(c);
                }
                fix(&mut s.tool_arguments);
                let key = s.chunks.text.as_ptr();
                let found = match outputs.iter().find(|(k, _)| *k == key) {
                    Some((_, f)) => f.clone(),
                    None => {
                        let f = secrets.find(&s.chunks.text);
                        for x in &f {
                            w.borrow_mut().count(x.kind, s.chunks.text.get(x.start..x.end).unwrap_or(""));
                        }
                        outputs.push((key, f.clone()));
                        f
                    }
                };
                withhold_chunks(&mut s.chunks, &found);
            }
            State::Small(s) => {
                run_once(&mut s.run);
                each(&mut s.outputs, |item| {
                    fix(&mut item.tool);
                    fix(&mut item.output);
                });
            }
            State::Exchange(s) => {
                run_once(&mut s.run);
                each(&mut s.exchanges, |item| {
                    fix(&mut item.user);
                    fix(&mut item.assistant);
                    for c in &mut item.tool_calls {
                        fix(c);
                    }
                });
            }
        }
    }
    *withheld = w.into_inner();
}

fn each<V>(items: &mut Ordered<V>, mut f: impl FnMut(&mut V)) {
    for (_, v) in &mut items.0 {
        f(v);
    }
}

fn run_fields(run: &mut RunFields, fix: &dyn Fn(&mut String)) {
    if let Some(e) = &mut run.earlier_conversation {
        for s in [&mut e.summary, &mut e.first_request].into_iter().flatten() {
            fix(s);
        }
        for x in &mut e.recent_exchanges {
            fix(&mut x.user);
            fix(&mut x.assistant);
        }
    }
    fix(&mut run.user_question);
    for s in [&mut run.final_answer, &mut run.agent_notes_during_the_run].into_iter().flatten() {
        fix(s);
    }
    if let Some(p) = &mut run.agent_progress {
        fix(&mut p.latest_note);
        if let Some(s) = &mut p.earlier_notes {
            fix(s);
        }
    }
}

/// The chunks with the secrets that touch them as placeholders (a secret cut
/// by a chunk's edge is withheld on both sides).
fn withhold_chunks(chunks: &mut crate::guard::classify::Chunks, found: &[Found]) {
    if found.is_empty() {
        return;
    }
    let text = &chunks.text;
    let mut changed = false;
    let texts: Vec<Cow<str>> = chunks
        .ranges
        .iter()
        .map(|&(a, z)| {
            let chunk = text.get(a..z).unwrap_or("");
            let inside: Vec<Found> = found
                .iter()
                .filter(|f| f.start < z && f.end > a)
                .map(|f| Found { start: f.start.max(a) - a, end: f.end.min(z) - a, kind: f.kind })
                .collect();
            if inside.is_empty() {
                Cow::Borrowed(chunk)
            } else {
                changed = true;
                Cow::Owned(redacted(chunk, &inside))
            }
        })
        .collect();
    if changed {
        let refs: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
        let first = chunks.first;
        *chunks = crate::guard::classify::Chunks::of_texts(first, &refs);
        chunks.withheld = true;
    }
}

#[cfg(test)]
mod tests;
