//! The scan: one pass over a text that finds every secret the built-in rules
//! know, in time linear in the text whatever it holds.
//!
//! For: [`scan`]. What it looks at, as it walks the bytes:
//! - the start of every word: a provider's prefix (`providers`), or a shape
//!   with no prefix (Discord and Telegram bot tokens, Mailchimp, Terraform
//!   Cloud, Azure AD client secrets);
//! - `-----BEGIN … PRIVATE KEY-----`: the block through its `END` line, or to
//!   the end of the text when it was cut off;
//! - `://`: a password (or a long token) in a URL's user information;
//! - an operator (`=`, `:`, `:=`, `=>`, a full-width `：`/`＝`): the name
//!   before it and the value after it, in every line form (spaces, quotes,
//!   a query's `&`, a `\` continuation, Python's implicit join, a JSON
//!   string's escaped quotes), and a name on one line with its value on the
//!   next (`- name: X` / `value: …`);
//! - a space after a secret's name or a scheme (`--token X`,
//!   `password X` in `.netrc`, `Bearer X`, `-p X`, `-u user:pass`);
//! - a `.pgpass` line, and percent-encoded lines (decoded, scanned again,
//!   mapped back);
//! - then, on each line that held a secret, the other random-looking quoted
//!   strings (a credential's partner: `Client("AC…", "<auth token>")`).
//!
//! Not for: the user's own patterns and merging (`mod.rs`).
//!
//! Why linear: every look back is bounded (64 bytes of name, 4 of quotes and
//! spaces, 40 of a column's spaces); every look ahead either ends at a byte
//! the scan then jumps past (a value withheld, a key block) or reads a run
//! whose end is cached for every later start inside it (`run_cache`,
//! `newline_cache`, `body_cache`, `failed`), and a value that was not a
//! secret shadows the operators inside it (`shadow`).

use super::names::{self, Family};
use super::providers::{Provider, PROVIDERS};
use super::value::{self, entropy};
use super::Found;
use crate::text::{find_byte, floor_char};

/// Every built-in secret in `text`, unsorted, possibly overlapping.
pub fn scan(text: &str) -> Vec<Found> {
    let mut s = Scan::new(text);
    s.run();
    let mut out = std::mem::take(&mut s.out);
    for (line_start, line_end) in std::mem::take(&mut s.encoded) {
        out.extend(decoded(text, line_start, line_end));
    }
    out
}

/// The providers by their prefix's first two bytes (hashed into 256
/// buckets), and those second bytes as a set for each first byte (every
/// prefix is ASCII).
struct Buckets([Vec<u16>; 256], [[u64; 2]; 128]);

/// A prefix's bucket: its first two bytes, hashed.
#[inline(always)]
fn bucket(first: u8, second: u8) -> usize {
    usize::from(first.wrapping_mul(31) ^ second)
}

thread_local! {
    static BUCKETS: std::rc::Rc<Buckets> = std::rc::Rc::new({
        let mut b: [Vec<u16>; 256] = std::array::from_fn(|_| Vec::new());
        let mut seconds = [[0u64; 2]; 128];
        for (k, p) in PROVIDERS.iter().enumerate() {
            let [first, second] = [p.prefix.as_bytes()[0], p.prefix.as_bytes()[1]];
            b[bucket(first, second)].push(k as u16);
            seconds[usize::from(first & 0x7F)][usize::from(second >> 6 & 1)] |= 1 << (second & 0x3F);
        }
        Buckets(b, seconds)
    });
}

struct Scan<'a> {
    text: &'a str,
    b: &'a [u8],
    out: Vec<Found>,
    buckets: std::rc::Rc<Buckets>,
    /// Operators before this byte were inside a value already judged.
    shadow: usize,
    /// The end of the unquoted value run found last: `(from, to)`.
    run_cache: (usize, usize),
    /// The next newline at or after a position: `(from, at)`.
    newline_cache: (usize, usize),
    /// A secret's name seen in a `name:` field, waiting for its `value:`:
    /// (family, kind, where it stops waiting).
    pending: Option<(Family, &'static str, usize)>,
    /// Lines with percent-escapes, to scan again decoded.
    encoded: Vec<(usize, usize)>,
    /// Whether to look for percent-escapes (not inside a decoded line).
    decode: bool,
    /// The last provider that turned a token down (by its prefix), and where the token ended.
    failed: std::cell::Cell<(&'static str, usize)>,
    /// The last unbounded provider body read: `(from, to, alphabet)`.
    body_cache: std::cell::Cell<(usize, usize, Option<super::providers::Body>)>,
}

/// What each byte is, as bits of one table (looked up for every byte).
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        let alnum = b.is_ascii_alphanumeric();
        t[c] = (alnum as u8 * ALNUM)
            | ((alnum || matches!(b, b'_' | b'-' | b'.' | b'/' | b'+' | b'~')) as u8 * RUN)
            | ((alnum || matches!(b, b'_' | b'-' | b'.') || b >= 0x80) as u8 * NAME)
            | (matches!(b, b'-' | b':' | b'=' | b',' | b' ' | b'\t' | b'%' | b'\n' | 0xEF) as u8 * TRIGGER);
        c += 1;
    }
    t
};
/// A letter or a digit.
const ALNUM: u8 = 1;
/// What a provider's token is made of.
const RUN: u8 = 2;
/// What a name is made of: letters, digits, `_ - .`, and any non-ASCII byte.
const NAME: u8 = 4;
/// The bytes other than letters and digits that may start something:
/// `-----BEGIN`, `:`, `=`, `,`, a full-width operator, a space, `%`, a
/// newline. Every other byte is passed over with one look.
const TRIGGER: u8 = 8;

#[inline(always)]
fn is(c: u8, class: u8) -> bool {
    CLASS[c as usize] & class != 0
}

fn word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

#[inline(always)]
fn name_byte(c: u8) -> bool {
    is(c, NAME)
}

fn quote(c: u8) -> bool {
    matches!(c, b'"' | b'\'' | b'`')
}

impl<'a> Scan<'a> {
    fn new(text: &'a str) -> Scan<'a> {
        Scan {
            text,
            b: text.as_bytes(),
            out: Vec::new(),
            buckets: BUCKETS.with(std::rc::Rc::clone),
            shadow: 0,
            run_cache: (usize::MAX, 0),
            newline_cache: (usize::MAX, 0),
            pending: None,
            encoded: Vec::new(),
            decode: true,
            body_cache: std::cell::Cell::new((usize::MAX, 0, None)),
            failed: std::cell::Cell::new(("", usize::MAX)),
        }
    }

    fn push(&mut self, start: usize, end: usize, kind: &'static str) {
        let (start, end) = (floor_char(self.text, start), ceil_char(self.text, end));
        if end > start {
            self.out.push(Found { start, end, kind });
        }
    }

    fn run(&mut self) {
        let b = self.b;
        let n = b.len();
        let mut i = 0;
        self.pgpass(0);
        while i < n {
            let c = b[i];
            let class = CLASS[c as usize];
            if class & ALNUM != 0 {
                // Inside a run of letters and digits nothing starts: on past it at once.
                let mut e = i + 1;
                while e < n && is(b[e], ALNUM) {
                    e += 1;
                }
                if (i == 0 || !is(b[i - 1], ALNUM)) && self.may_be_token(i, e) {
                    if let Some(end) = self.word(i) {
                        i = end;
                        continue;
                    }
                }
                i = e;
                continue;
            }
            if class & TRIGGER == 0 {
                i += 1;
                continue;
            }
            match c {
                b'\n' => self.pgpass(i + 1),
                b'-' if b.get(i + 1) == Some(&b'-') && b[i..].starts_with(b"-----BEGIN") => {
                    if let Some(end) = self.private_key(i) {
                        i = end;
                        continue;
                    }
                }
                b':' if b.get(i + 1) == Some(&b'/') && b.get(i + 2) == Some(&b'/') => {
                    self.url(i);
                    i += 3;
                    continue;
                }
                b'=' | b':' | b',' if c != b',' || (i > 0 && quote(b[i - 1])) => {
                    let mut op_end = i + 1;
                    while op_end < n && op_end - i < 3 && matches!(b[op_end], b'=' | b'>' | b':') {
                        op_end += 1;
                    }
                    if let Some(end) = self.assignment(i, op_end) {
                        i = end;
                        continue;
                    }
                    i = op_end;
                    continue;
                }
                // Full-width `：` and `＝` (EF BC 9A, EF BC 9D).
                0xEF if b.get(i + 1) == Some(&0xBC) && matches!(b.get(i + 2), Some(0x9A | 0x9D)) => {
                    if let Some(end) = self.assignment(i, i + 3) {
                        i = end;
                        continue;
                    }
                    i += 3;
                    continue;
                }
                b' ' | b'\t' if i > 0 && name_byte(b[i - 1]) => {
                    if let Some(end) = self.spaced(i) {
                        i = end;
                        continue;
                    }
                }
                b'%' if self.decode
                    && b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
                    && self.encoded.last().is_none_or(|&(_, le)| i > le) =>
                {
                    let line = self.line(i);
                    self.encoded.push(line);
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The next newline at or after `at`, or the text's end (cached: the
    /// scan asks in increasing order, so each newline is looked for once).
    fn newline(&mut self, at: usize) -> usize {
        let (from, nl) = self.newline_cache;
        if from <= at && at <= nl {
            return nl;
        }
        let nl = find_byte(&self.b[at..], b'\n').map_or(self.b.len(), |p| at + p);
        self.newline_cache = (at, nl);
        nl
    }

    /// The line around `at`: back to the last newline within 4 KB, ahead to the next.
    fn line(&mut self, at: usize) -> (usize, usize) {
        let low = at.saturating_sub(4096);
        let start = self.b[low..at].iter().rposition(|&c| c == b'\n').map_or(low, |p| low + p + 1);
        (start, self.newline(at))
    }

    // ---- words ----

    /// Whether the word at `i` (its letters and digits end at `alnum_end`)
    /// may start what [`Scan::word`] finds, told in a few looks: every
    /// format but a Telegram token's has 16 bytes of a token, and then a
    /// provider's first two bytes or a shape's separator where it stands.
    #[inline(always)]
    fn may_be_token(&self, i: usize, alnum_end: usize) -> bool {
        let b = self.b;
        let (c, next) = (b[i], b.get(alnum_end).copied());
        if next == Some(b':') && alnum_end - i >= 8 {
            return true;
        }
        if alnum_end - i < 16 && !next.is_some_and(|c| is(c, RUN)) {
            return false;
        }
        if self.provider_start(i) {
            return true;
        }
        let at = |k: usize, x: u8| b.get(i + k) == Some(&x);
        (matches!(c, b'M' | b'N' | b'O') && self.discord_dot(i))
            || at(32, b'-')
            || at(14, b'.')
            || (at(4, b'Q') && at(5, b'~'))
    }

    /// Whether a `.` stands where a Discord token's first part ends (23 to 28 bytes from `i`).
    #[inline(always)]
    fn discord_dot(&self, i: usize) -> bool {
        self.b.get(i + 23..self.b.len().min(i + 29)).is_some_and(|w| w.contains(&b'.'))
    }

    /// Whether some provider's prefix starts with the two bytes at `i`.
    #[inline(always)]
    fn provider_start(&self, i: usize) -> bool {
        let (c, second) = (self.b[i], self.b.get(i + 1).copied().unwrap_or(0));
        c < 0x80
            && second < 0x80
            && self.buckets.1[usize::from(c)][usize::from(second >> 6)] >> (second & 0x3F) & 1 == 1
    }

    /// A word starting at `i`: a provider's format or a shape without a prefix.
    /// Returns the end of the secret found.
    fn word(&mut self, i: usize) -> Option<usize> {
        let b = self.b;
        let c = b[i];
        // Every format is 20 characters or more, a Telegram token's digits
        // come before a `:`: a shorter word (most of them) is none.
        let head = &b[i..b.len().min(i + 16)];
        let run = head.iter().position(|&c| !is(c, RUN)).unwrap_or(head.len());
        if run < 16 {
            // Only a Telegram token's digits (8 to 10, then `:`), bare or after `bot`.
            let telegram = if c.is_ascii_digit() {
                (8..=10).contains(&run) && b.get(i + run) == Some(&b':')
            } else {
                c == b'b' && (11..=13).contains(&run) && b[i..].starts_with(b"bot") && b.get(i + run) == Some(&b':')
            };
            if !telegram {
                return None;
            }
            return self.telegram(if c == b'b' { i + 3 } else { i });
        }
        let second = b.get(i + 1).copied().unwrap_or(0);
        // Every prefix has two bytes or more: the second compared before the rest.
        let hit = if !self.provider_start(i) {
            None
        } else {
            self.buckets.0[bucket(c, second)].iter().find_map(|&k| {
                let p = &PROVIDERS[k as usize];
                self.provider(p, i).map(|end| (p.kind(), end))
            })
        };
        if let Some((kind, end)) = hit {
            self.push(i, end, kind);
            return Some(end);
        }
        // The shapes with no prefix, each of which looks first for its separator
        // (a Mailchimp key, a Terraform token or an Azure secret may start with a digit).
        if matches!(c, b'M' | b'N' | b'O') && self.discord_dot(i) {
            if let Some(end) = self.discord(i) {
                return Some(end);
            }
        }
        if c.is_ascii_hexdigit() || c.is_ascii_lowercase() {
            if let Some(end) = self.mailchimp_or_terraform(i) {
                return Some(end);
            }
        }
        self.azure_secret(i)
    }

    /// The end of provider `p`'s token at `i`, if the text has one there.
    fn provider(&self, p: &Provider, i: usize) -> Option<usize> {
        let b = self.b;
        if !b[i..].starts_with(p.prefix.as_bytes()) {
            return None;
        }
        let body = i + p.prefix.len();
        let mut end = self.body_end(p, body);
        // A run this provider already turned down (`eyJa.eyJa.…`: every start in it) is turned down again.
        let (failed_prefix, failed_end) = self.failed.get();
        if failed_end == end && std::ptr::eq(failed_prefix, p.prefix) {
            return None;
        }
        // A token ends with its alphabet: a trailing `.` or `-` belongs to the sentence.
        while end > body && matches!(b[end - 1], b'.' | b'-') && p.body != super::providers::Body::HexDash {
            end -= 1;
        }
        let len = end - body;
        let max = if p.max == super::providers::ANY { usize::MAX } else { usize::from(p.max) };
        if len < usize::from(p.min) || len > max || b.get(end).is_some_and(|&c| word_byte(c) && p.body.has(c)) {
            return None;
        }
        // A word of the prefix's letters is not a key: its body must look random.
        // Bounded looks: a megabyte-long run is judged by its head.
        let tok = &self.text[body..floor_char(self.text, end.min(body + 256))];
        let floor = if len >= 24 { 3.0 } else { 2.5 };
        let rejected = (entropy(tok) <= floor && !p.kind().starts_with("private-key"))
            || (p.kind() == "jwt" && (!tok.contains('.') || tok.ends_with("..")))
            || (matches!(p.kind(), "openai-key" | "airtable-token" | "harness-key" | "dropbox-token" | "yandex-key")
                && value::wordy(tok));
        if rejected {
            self.failed.set((p.prefix, end));
            return None;
        }
        Some(end)
    }

    /// The end of `p`'s body from `body`: a run of its alphabet, at most
    /// `max + 1` long. A run with no bound is cached per alphabet, so every
    /// start inside it (`eyJ.eyJ.eyJ…`) ends where the first did.
    fn body_end(&self, p: &Provider, body: usize) -> usize {
        let b = self.b;
        let unbounded = p.max == super::providers::ANY;
        if unbounded {
            let (lo, hi, alphabet) = self.body_cache.get();
            if alphabet == Some(p.body) && lo <= body && body <= hi {
                return hi;
            }
        }
        let mut end = body;
        while end < b.len() && p.body.has(b[end]) && (unbounded || end - body <= usize::from(p.max)) {
            end += 1;
        }
        if unbounded {
            self.body_cache.set((body, end, Some(p.body)));
        }
        end
    }

    /// A Telegram bot token at `i`: 8 to 10 digits, `:`, 35 of `[A-Za-z0-9_-]`.
    fn telegram(&mut self, i: usize) -> Option<usize> {
        let b = self.b;
        let digits = b[i..].iter().take(11).take_while(|c| c.is_ascii_digit()).count();
        if !(8..=10).contains(&digits) || b.get(i + digits) != Some(&b':') {
            return None;
        }
        let body = i + digits + 1;
        let len =
            b[body..].iter().take(40).take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-').count();
        if !(34..=36).contains(&len) || entropy(&self.text[body..body + len]) <= 3.0 {
            return None;
        }
        self.push(i, body + len, "telegram-token");
        Some(body + len)
    }

    /// A Discord bot token at `i`: three base64url parts of 23–28, 6–7 and 27–40 characters.
    fn discord(&mut self, i: usize) -> Option<usize> {
        let b = self.b;
        let mut parts = [0usize; 3];
        let mut k = 0;
        let mut j = i;
        while j < b.len() && j - i < 90 {
            let c = b[j];
            if c == b'.' {
                k += 1;
                if k == 3 {
                    break;
                }
            } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' {
                parts[k] += 1;
            } else {
                break;
            }
            j += 1;
        }
        let ok =
            k == 2 && (23..=28).contains(&parts[0]) && (6..=7).contains(&parts[1]) && (27..=40).contains(&parts[2]);
        if !ok || entropy(&self.text[i..j]) <= 3.5 {
            return None;
        }
        self.push(i, j, "discord-token");
        Some(j)
    }

    /// Mailchimp (`<32 hex>-us<1–2 digits>`) or Terraform Cloud
    /// (`<14 of [a-z0-9]>.atlasv1.<60–70>`) at `i`.
    fn mailchimp_or_terraform(&mut self, i: usize) -> Option<usize> {
        let b = self.b;
        // Each shape's separator first: a word without it is neither.
        let mailchimp = b.get(i + 32) == Some(&b'-');
        if !mailchimp && b.get(i + 14) != Some(&b'.') {
            return None;
        }
        let hex = if mailchimp { b[i..].iter().take(33).take_while(|c| c.is_ascii_hexdigit()).count() } else { 0 };
        // Random hex has letters: 32 digits are a number (a build id, a timestamp).
        if hex == 32 && b[i + 32..].starts_with(b"-us") && b[i..i + 32].iter().any(u8::is_ascii_alphabetic) {
            let d = b[i + 35..].iter().take(3).take_while(|c| c.is_ascii_digit()).count();
            if (1..=2).contains(&d) {
                self.push(i, i + 35 + d, "mailchimp-key");
                return Some(i + 35 + d);
            }
        }
        let head = b[i..].iter().take(15).take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit()).count();
        if head == 14 && b[i + 14..].starts_with(b".atlasv1.") {
            let body = i + 23;
            let len = b[body..]
                .iter()
                .take(80)
                .take_while(|&&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'='))
                .count();
            if (50..=80).contains(&len) {
                self.push(i, body + len, "terraform-token");
                return Some(body + len);
            }
        }
        None
    }

    /// An Azure AD client secret at `i`: 3 characters, a digit, `Q~`, then 31–34.
    fn azure_secret(&mut self, i: usize) -> Option<usize> {
        let b = self.b;
        let azure = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'~' | b'.' | b'-');
        if b.len() < i + 37
            || !b[i + 3].is_ascii_digit()
            || &b[i + 4..i + 6] != b"Q~"
            || !b[i..i + 3].iter().all(|&c| azure(c))
        {
            return None;
        }
        let len = b[i + 6..].iter().take(40).take_while(|&&c| azure(c)).count();
        if !(31..=36).contains(&len) {
            return None;
        }
        self.push(i, i + 6 + len, "azure-secret");
        Some(i + 6 + len)
    }

    // ---- blocks and URLs ----

    /// A private key block from `-----BEGIN`: through its `END` line, or to
    /// the end of the text when the block was cut off (all of it is key).
    fn private_key(&mut self, start: usize) -> Option<usize> {
        let b = self.b;
        let header_end = find(&b[..(start + 130).min(b.len())], b"-----", start + 10)?;
        if !names::contains_ignore_case(&b[start..header_end], b"PRIVATE KEY") {
            return None;
        }
        let end = match find(b, b"-----END", header_end + 5) {
            Some(e) => find(&b[..(e + 130).min(b.len())], b"-----", e + 8).map_or(b.len(), |c| c + 5),
            None => b.len(),
        };
        self.push(start, end, "private-key");
        Some(end)
    }

    /// A URL at its `://`: a password in its user information (or a long
    /// random user, a token used as the user).
    fn url(&mut self, colon: usize) {
        let b = self.b;
        let from = colon + 3;
        let high = (from + 512).min(b.len());
        let stop = |c: u8| {
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
                    | b'('
                    | b')'
                    | b'['
                    | b']'
                    | b'{'
                    | b'}'
                    | b'\\'
            )
        };
        let to = from + b[from..high].iter().position(|&c| stop(c)).unwrap_or(high - from);
        let Some(at) = b[from..to].iter().rposition(|&c| c == b'@').map(|p| from + p) else { return };
        match b[from..at].iter().position(|&c| c == b':').map(|p| from + p) {
            Some(c) => {
                let pass = &self.text[c + 1..at];
                if !pass.is_empty() && !value::placeholder(pass) {
                    self.push(c + 1, at, "url-credentials");
                }
                let user = &self.text[from..c];
                if user.len() >= 16 && value::is_secret(user, Family::Secret, true) {
                    self.push(from, c, "url-credentials");
                }
            }
            None => {
                let user = &self.text[from..at];
                if user.len() >= 16 && value::is_secret(user, Family::Secret, true) {
                    self.push(from, at, "url-credentials");
                }
            }
        }
    }

    /// A `.pgpass` line at `start`: `host:port:database:user:password`.
    fn pgpass(&mut self, start: usize) {
        let b = self.b;
        // Most lines fail at once: a host's name, then `:` and a port or `*`.
        let mut h = start;
        while h < b.len()
            && h - start < 256
            && (b[h].is_ascii_alphanumeric() || matches!(b[h], b'.' | b'-' | b'_' | b'*'))
        {
            h += 1;
        }
        if h == start || b.get(h) != Some(&b':') || !b.get(h + 1).is_some_and(|c| c.is_ascii_digit() || *c == b'*') {
            return;
        }
        // The four colons from the host's on, the password after the last.
        let mut colons = [0usize; 4];
        let mut k = 0;
        let mut j = h;
        while j < b.len() && j - start < 512 {
            match b[j] {
                b'\n' | b'\r' | b' ' | b'\t' => break,
                b':' if k < 4 => {
                    colons[k] = j;
                    k += 1;
                }
                b':' => return,
                _ => {}
            }
            j += 1;
        }
        if k != 4 || j == colons[3] + 1 || !matches!(b.get(j), None | Some(b'\n' | b'\r')) {
            return;
        }
        let port = &b[colons[0] + 1..colons[1]];
        let port_ok = port == b"*" || (!port.is_empty() && port.len() <= 5 && port.iter().all(u8::is_ascii_digit));
        let fields_ok = colons[2] > colons[1] + 1 && colons[3] > colons[2] + 1 && j >= colons[3] + 5;
        if !(port_ok && fields_ok) {
            return;
        }
        self.push(colons[3] + 1, j, "password");
    }

    // ---- assignments ----

    /// The name that ends right before `at`, over at most 4 quotes,
    /// brackets and spaces: `(start, end)`.
    fn name_before(&self, at: usize) -> Option<(usize, usize)> {
        let b = self.b;
        let mut e = at;
        let mut k = 0;
        while e > 0 && k < 4 && matches!(b[e - 1], b' ' | b'\t' | b'"' | b'\'' | b'`' | b']' | b'\\') {
            e -= 1;
            k += 1;
        }
        let mut s = e;
        while s > 0 && e - s < 64 && name_byte(b[s - 1]) {
            s -= 1;
        }
        (s < e).then_some((s, e))
    }

    /// An operator at `[op, op_end)`. Returns the end of the secret withheld.
    fn assignment(&mut self, op: usize, op_end: usize) -> Option<usize> {
        if op < self.shadow {
            return None;
        }
        let (ns, ne) = self.name_before(op)?;
        let name = &self.b[ns..ne];
        let mut family = names::family(name);
        let mut kind = family.map(|f| names::kind(name, f));
        if names::names_next(name) {
            let (vs, ve, _) = self.value(op_end, ns)?;
            let v = &self.b[vs..ve];
            if let Some(f) = names::family(v) {
                self.pending = Some((f, names::kind(v, f), ve + 400));
                return None;
            }
        }
        if family.is_none() && names::is_value(name) {
            if let Some((f, k, until)) = self.pending.take() {
                if op <= until {
                    family = Some(f);
                    kind = Some(k);
                }
            }
        }
        let Some((family, kind)) = family.zip(kind) else {
            return self.unnamed(op_end, ns);
        };
        let (vs, ve, literal) = self.value(op_end, ns)?;
        let literal = literal || self.config_line(ns);
        self.judge(vs, ve, family, kind, literal)
    }

    /// A quoted value whose name says nothing, withheld only when it looks
    /// like a generated password (`"result": "YAdz…*…%5B…@OY3k"` in a
    /// Terraform state): 16 or more characters, letters, digits and
    /// symbols, no word, entropy above 4.
    fn unnamed(&mut self, op_end: usize, ns: usize) -> Option<usize> {
        let b = self.b;
        let mut j = op_end;
        while j < b.len() && j - op_end < 4 && b[j] == b' ' {
            j += 1;
        }
        if !b.get(j).is_some_and(|&c| quote(c)) {
            return None;
        }
        let (vs, ve, _) = self.value(op_end, ns)?;
        let v = self.text.get(vs..ve)?;
        if v.len() >= 16 && v.len() <= 128 && value::generated(v) {
            self.push(vs, ve, "generic-secret");
            return Some(ve);
        }
        None
    }

    /// Whether the value `[vs, ve)` of a name of `family` is a secret: a
    /// provider's token at its start, else by its look. Pushes it and
    /// returns its end, or shadows the operators inside it.
    fn judge(&mut self, vs: usize, ve: usize, family: Family, kind: &'static str, literal: bool) -> Option<usize> {
        if self.b[vs..].starts_with(b"-----BEGIN") {
            return self.private_key(vs);
        }
        let v = self.text.get(vs..ve)?;
        if !v.contains('\n') {
            if let Some(end) = self.word_at(vs) {
                return Some(end);
            }
        }
        // A value split over lines (`\` continuations, `"abc" "def"`): judged joined.
        if let Some(joined) = joined(&v[..floor_char(v, 4096)]) {
            // A provider's token, split: its kind (a short value only; a long one is judged by its look).
            let inner = if joined.len() <= 1024 { scan(&joined) } else { Vec::new() };
            let whole = inner.iter().find(|f| f.start == 0 && f.end + 2 >= joined.len()).map(|f| f.kind);
            if let Some(k) = whole.or_else(|| value::is_secret(&joined, family, literal).then_some(kind)) {
                self.push(vs, ve, k);
                return Some(ve);
            }
            self.shadow = self.shadow.max(ve);
            return None;
        }
        // By its look; a passphrase with spaces only where a literal stands.
        if value::is_secret(v, family, literal) || (literal && joined_secret(v, family)) {
            self.push(vs, ve, kind);
            return Some(ve);
        }
        self.shadow = self.shadow.max(ve);
        None
    }

    /// A provider token starting at `at`, if the text has one there.
    fn word_at(&mut self, at: usize) -> Option<usize> {
        let b = self.b;
        if at < b.len() && b[at].is_ascii_alphanumeric() && (at == 0 || !b[at - 1].is_ascii_alphanumeric()) {
            self.word(at)
        } else {
            None
        }
    }

    /// The value after an operator ending at `from`: `(start, end, quoted)`.
    /// `name_start` tells a URL query (`?api_key=…&page=2`), where `&` ends it.
    fn value(&mut self, from: usize, name_start: usize) -> Option<(usize, usize, bool)> {
        let b = self.b;
        let n = b.len();
        let mut j = from;
        // Columns (`secret        I7Hk…` in `vault kv get`) as well as a space.
        while j < n && j - from < 40 && matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
        // Python's parenthesized implicit join: `KEY = ("abc"` … `"def")`.
        if b.get(j) == Some(&b'(') {
            let mut k = j + 1;
            while k < n && k - j < 40 && matches!(b[k], b' ' | b'\t' | b'\n' | b'\r') {
                k += 1;
            }
            if k < n && quote(b[k]) {
                j = k;
            }
        }
        if j >= n {
            return None;
        }
        // A JSON string's escaped quote: `\"`.
        if b[j] == b'\\' && b.get(j + 1).is_some_and(|&c| quote(c)) {
            let q = b[j + 1];
            let vs = j + 2;
            let line_end = self.newline(vs);
            let close = (vs..line_end).find(|&k| b[k] == q && b[k - 1] == b'\\').map_or(line_end, |k| k - 1);
            return Some((vs, close, true));
        }
        if quote(b[j]) {
            let q = b[j];
            let vs = j + 1;
            let mut ve = self.closing(vs, q);
            // Implicit joins: `"abc" "def"`, over at most two newlines.
            loop {
                let mut k = ve + 1;
                let mut newlines = 0;
                while k < n && k - ve < 80 && matches!(b[k], b' ' | b'\t' | b'\n' | b'\r' | b'\\') {
                    newlines += usize::from(b[k] == b'\n');
                    k += 1;
                }
                if newlines <= 2 && k < n && k > ve + 1 && b[k] == q && ve < n && b[ve] == q {
                    let next = self.closing(k + 1, q);
                    if next > k + 1 {
                        ve = next;
                        continue;
                    }
                }
                break;
            }
            return Some((vs, ve, true));
        }
        let query = name_start > 0 && matches!(b[name_start - 1], b'?' | b'&');
        let ve = self.unquoted(j, query);
        (ve > j).then_some((j, ve, false))
    }

    /// The closing quote `q` of a literal opened before `from`, on its line
    /// (or on the next, after a `\` at the line's end); the line's end when
    /// it has none.
    fn closing(&mut self, from: usize, q: u8) -> usize {
        let b = self.b;
        let mut at = from;
        loop {
            let line_end = self.newline(at);
            match find_byte(&b[at..line_end], q) {
                Some(p) => return at + p,
                None if line_end > at && b[line_end - 1] == b'\\' && line_end + 1 < b.len() => at = line_end + 1,
                None => return line_end,
            }
        }
    }

    /// The end of an unquoted value from `from`: up to a space, a quote or
    /// a separator (`&` in a query), over `\` continuations; an inner `=`
    /// ends it unless it is base64's padding. Cached: any start inside the
    /// last run ends where it ended.
    fn unquoted(&mut self, from: usize, query: bool) -> usize {
        let (lo, hi) = self.run_cache;
        if lo <= from && from < hi && !query {
            return hi;
        }
        let b = self.b;
        let n = b.len();
        let mut k = from;
        while k < n {
            match b[k] {
                b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\'' | b'`' | b',' | b';' | b')' | b']' | b'{' | b'}' | b'<'
                | b'>' => break,
                b'&' if query => break,
                b'=' if !matches!(
                    b.get(k + 1),
                    None | Some(
                        b'=' | b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\'' | b',' | b';' | b'&' | b')' | b'}' | b']'
                    )
                ) =>
                {
                    break
                }
                b'\\' => match b.get(k + 1) {
                    // A shell continuation: the value goes on after the next line's indent.
                    Some(b'\n') => {
                        k += 2;
                        while k < n && matches!(b[k], b' ' | b'\t') {
                            k += 1;
                        }
                        continue;
                    }
                    // A JSON escape (`\n`, `\"`) ends it.
                    Some(b'n' | b'r' | b't' | b'"' | b'\'') => break,
                    _ => {}
                },
                _ => {}
            }
            k += 1;
        }
        if !query {
            self.run_cache = (from, k);
        }
        k
    }

    /// Whether the line holding the name at `name_start` only assigns it:
    /// before the name nothing but spaces, quotes, brackets, a list marker,
    /// `export` or `set` (a `.env` line, YAML, JSON, INI).
    fn config_line(&self, name_start: usize) -> bool {
        let b = self.b;
        let low = name_start.saturating_sub(80);
        let start = b[low..name_start].iter().rposition(|&c| c == b'\n').map_or(low, |p| low + p + 1);
        if start == low && low > 0 {
            return false;
        }
        let prefix = self.text.get(start..name_start).unwrap_or("").trim_start();
        let prefix = ["export ", "set ", "ENV ", "ARG ", "$env:", "setx "]
            .iter()
            .find_map(|p| prefix.strip_prefix(p))
            .unwrap_or(prefix);
        prefix.bytes().all(|c| matches!(c, b' ' | b'\t' | b'"' | b'\'' | b'{' | b'[' | b',' | b'-'))
    }

    // ---- spaced names ----

    /// A space at `sp` after a word: a secret's name, a flag or a scheme,
    /// then the value after the spaces.
    fn spaced(&mut self, sp: usize) -> Option<usize> {
        let b = self.b;
        // The value first, cheaply: prose's next word (small letters, or
        // shorter than any secret) ends it here, before the name is read.
        let spaces = &b[sp..b.len().min(sp + 40)];
        let k = sp + spaces.iter().position(|&c| !matches!(c, b' ' | b'\t')).unwrap_or(spaces.len());
        let (mut token, mut plain) = (0, true);
        for &c in &b[k..b.len().min(k + 24)] {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            plain &= c.is_ascii_lowercase() || matches!(c, b',' | b'.' | b';' | b':');
            token += 1;
        }
        if token < 6 || (plain && token < 24) {
            return None;
        }

        // The word before the space (a name byte ends it: the caller's test).
        let (ns, _) = self.name_before(sp)?;
        let word = &b[ns..sp];
        let vs = k;
        if vs >= b.len()
            || matches!(b[vs], b'=' | b':' | b'\n' | b'\r' | b'-' | b'(' | b'{' | b'[')
                && !(b[vs] == b'-' && word == b"-p")
        {
            return None;
        }
        if word == b"-u" || word == b"--user" {
            return self.user_pass(vs);
        }
        if word == b"-p" || word == b"--password" || word == b"--pass" {
            let (s, e, _) = self.value(sp, ns)?;
            return self.judge(s, e, Family::Password, "password", false);
        }
        if names::scheme(word) {
            // `Bearer <token>`, `Authorization: Bot <token>`; `token`/`key` alone only after `Authorization`.
            if [b"token".as_slice(), b"key", b"bot", b"apikey", b"digest"].iter().any(|w| word.eq_ignore_ascii_case(w))
                && !self.after_authorization(ns)
            {
                return None;
            }
            let (s, e, _) = self.value(sp, ns)?;
            if self.b[s..e].contains(&b'\n') {
                return self.judge(s, e, Family::Secret, "authorization", false);
            }
            if let Some(end) = self.word_at(s) {
                return Some(end);
            }
            let v = self.text.get(s..e)?;
            let v_trim = v.trim_end_matches('=');
            if v_trim.len() >= 8
                && (value::is_secret(v_trim, Family::Secret, false)
                    || word.eq_ignore_ascii_case(b"basic") && base64_like(v_trim))
            {
                self.push(s, e, "authorization");
                return Some(e);
            }
            return None;
        }
        // "the password is …": the name before `is`.
        let (family, kind_name) = if word == b"is" || word == b"was" || word.eq_ignore_ascii_case(b"by") {
            let (s, e) = self.name_before(ns)?;
            // `IDENTIFIED BY '…'` (SQL) names a password too.
            let f = if word.eq_ignore_ascii_case(b"by") {
                b[s..e].eq_ignore_ascii_case(b"identified").then_some(Family::Password)
            } else {
                names::family(&b[s..e]).filter(|f| *f == Family::Password)
            };
            (f, b"password".as_slice())
        } else {
            (names::family(word), word)
        };
        let family = family?;
        // A name that ends a sentence or a clause (`… never authorization. Carrier …`) is prose.
        if matches!(b[sp - 1], b'.' | b',' | b';') {
            return None;
        }
        let kind = names::kind(kind_name, family);
        let (s, mut e, _) = self.value(sp, ns)?;
        while e > s && matches!(b[e - 1], b'.' | b',' | b':' | b';' | b'!' | b'?') {
            e -= 1;
        }
        if self.b[s..e].contains(&b'\n') {
            return self.judge(s, e, family, kind, false);
        }
        if let Some(end) = self.word_at(s) {
            return Some(end);
        }
        let v = self.text.get(s..e)?;
        // Prose has words after a name; a credential file or a command line has the value.
        let plain = v.bytes().all(|c| c.is_ascii_alphabetic());
        let short = family != Family::Password && v.len() < 12;
        if !(short || family == Family::Password && plain) && value::is_secret(v, family, false) {
            self.push(s, e, kind);
            return Some(e);
        }
        None
    }

    /// `-u user:password` (curl): the password.
    fn user_pass(&mut self, vs: usize) -> Option<usize> {
        let (s, e, _) = self.value(vs, vs)?;
        let v = &self.b[s..e];
        let colon = v.iter().position(|&c| c == b':')?;
        let pass = self.text.get(s + colon + 1..e)?;
        if pass.len() >= 6 && !value::placeholder(pass) {
            self.push(s + colon + 1, e, "password");
            return Some(e);
        }
        None
    }

    /// Whether `Authorization` stands on the line within 40 bytes before `at`.
    fn after_authorization(&self, at: usize) -> bool {
        let low = at.saturating_sub(40);
        names::contains_ignore_case(&self.b[low..at], b"authorization")
    }
}

/// A value split over lines, joined: `\` and the line break and the next
/// line's indent taken out, and a quote, blanks and the same quote
/// (Python's implicit join) too. `None` when nothing was split.
fn joined(v: &str) -> Option<String> {
    if !v.contains('\n') {
        return None;
    }
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && matches!(b.get(i + 1), Some(b'\n' | b'\r')) {
            i += 1;
            while i < b.len() && matches!(b[i], b'\n' | b'\r' | b' ' | b'\t') {
                i += 1;
            }
            continue;
        }
        if quote(c) {
            let mut k = i + 1;
            while k < b.len() && matches!(b[k], b' ' | b'\t' | b'\n' | b'\r' | b'\\') {
                k += 1;
            }
            if k < b.len() && b[k] == c {
                i = k + 1;
                continue;
            }
        }
        if matches!(c, b'\n' | b'\r') {
            return None;
        }
        out.push(c);
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Whether a value with spaces or joins is still a secret: a passphrase in a
/// password's quotes (`"correct horse battery 42"`).
fn joined_secret(v: &str, family: Family) -> bool {
    family == Family::Password
        && v.contains(' ')
        && !value::placeholder(v)
        && v.len() >= 12
        && v.len() <= 200
        && !v.contains('\n')
        && v.bytes().any(|c| c.is_ascii_digit() || !c.is_ascii_alphanumeric() && c != b' ')
        && v.split(' ').count() <= 8
        && !v.ends_with('.')
}

fn base64_like(v: &str) -> bool {
    v.len() >= 8
        && v.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
        && v.bytes().any(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        && !value::wordy(v)
        && entropy(v) > 2.5
}

/// The secrets of a line with percent-escapes, found in its decoded text and
/// mapped back to the original's bytes.
fn decoded(text: &str, start: usize, end: usize) -> Vec<Found> {
    let b = &text.as_bytes()[start..end];
    let mut out = Vec::with_capacity(b.len());
    let mut map = Vec::with_capacity(b.len() + 1);
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                let c = (h * 16 + l) as u8;
                if c < 0x80 {
                    out.push(c);
                    map.push(start + i);
                    i += 3;
                    continue;
                }
            }
        }
        out.push(b[i]);
        map.push(start + i);
        i += 1;
    }
    map.push(end);
    let Ok(d) = String::from_utf8(out) else { return Vec::new() };
    let mut s = Scan::new(&d);
    s.decode = false;
    s.run();
    s.out.into_iter().map(|f| Found { start: map[f.start], end: map[f.end], kind: f.kind }).collect()
}

/// On each line holding a provider's secret, the other quoted strings that
/// look like a credential (its partner: an account id's auth token).
/// `found` is in order (merged).
pub fn partners(text: &str, found: &mut Vec<Found>) {
    let b = text.as_bytes();
    let mut lines: Vec<(usize, usize)> = Vec::new();
    for f in found.iter() {
        // A provider's id or key has a partner; a value judged by its name alone does not.
        if matches!(
            f.kind,
            "private-key"
                | "password"
                | "generic-secret"
                | "authorization"
                | "aws-secret-key"
                | "url-credentials"
                | "custom"
        ) {
            continue;
        }
        let low = f.start.saturating_sub(300);
        let s = b[low..f.start].iter().rposition(|&c| c == b'\n').map_or(low, |p| low + p + 1);
        let high = (f.end + 300).min(b.len());
        let e = b[f.end..high].iter().position(|&c| c == b'\n').map_or(high, |p| f.end + p);
        if lines.last().is_none_or(|&(_, le)| s >= le) {
            lines.push((s, e));
        }
    }
    for (s, e) in lines {
        let mut i = s;
        while i < e {
            if quote(b[i]) {
                let q = b[i];
                let z = b[i + 1..e].iter().position(|&c| c == q).map_or(e, |p| i + 1 + p);
                if let Some(v) = text.get(i + 1..z) {
                    if v.len() >= 16 && v.len() <= 200 && !v.contains(' ') && value::is_secret(v, Family::Secret, true)
                    {
                        found.push(Found { start: i + 1, end: z, kind: "generic-secret" });
                    }
                }
                i = z + 1;
            } else {
                i += 1;
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from >= hay.len() {
        return None;
    }
    hay[from..].windows(needle.len()).position(|w| w == needle).map(|p| from + p)
}

/// The smallest char boundary at or after `i`.
fn ceil_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}
