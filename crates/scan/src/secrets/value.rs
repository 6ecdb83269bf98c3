//! What a value looks like: a secret, or a word, a name in code, a path, a
//! number, a placeholder.
//!
//! For: deciding whether the value assigned to a secret's name is the secret
//! (`DB_PASSWORD=c7%kQ2!x` is; `pass: PassInput`, `"Key": "logs/2026/app.log"`
//! and `token = getToken()` are not). Not for: provider formats, which tell
//! a secret by their prefix (`providers`).
//!
//! Every test here reads the value once or a fixed number of times: the scan
//! calls it at most once per assignment, on a value no other assignment
//! shares, so the whole stays linear.

use super::names::Family;

/// Whether `v` holds any of the ASCII bytes `set` (one loop for every set,
/// where `str::contains([char; N])` would compile one per size): the set as
/// bits, one look a byte.
#[inline(always)]
fn has_any(v: &str, set: &[u8]) -> bool {
    let mut bits = [0u64; 2];
    for &c in set {
        bits[usize::from(c >> 6 & 1)] |= 1 << (c & 0x3F);
    }
    let b = v.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 && bits[usize::from(c >> 6)] >> (c & 0x3F) & 1 == 1 {
            return true;
        }
        i += 1;
    }
    false
}

/// Shannon entropy in bits per byte (gitleaks' `shannonEntropy` over the
/// bytes; a non-ASCII character counts as its bytes).
pub fn entropy(s: &str) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in s.as_bytes() {
        counts[b as usize] += 1;
    }
    let len = s.len() as f64;
    counts.iter().filter(|&&n| n > 0).map(|&n| f64::from(n) / len).map(|p| -p * p.log2()).sum()
}

/// Whether the value assigned to a name of `family` is a secret. `literal`:
/// it stood in quotes or on a line that only assigns it (`.env`, YAML, INI),
/// so a plain word may be a password there, not a name in code.
pub fn is_secret(v: &str, family: Family, literal: bool) -> bool {
    let min = match family {
        Family::Password => 6,
        Family::Secret => 8,
        Family::Key => 16,
    };
    if v.len() < min || (v.len() < 4 * min && v.chars().count() < min) {
        return false;
    }
    // A long value is judged by its head: its look does not change past 4 KB,
    // and a megabyte of it must not be read a dozen times.
    let v = &v[..crate::text::floor_char(v, 4096)];
    // The cheap looks first, from one pass over the bytes: a space, a URL,
    // a path (`PASS src/app.test.ts`), a number, an address.
    let (mut space, mut colon, mut slash, mut plus_eq) = (false, false, false, false);
    for &c in v.as_bytes() {
        match c {
            b' ' | b'\t' | b'\n' => space = true,
            b':' => colon = true,
            b'/' => slash = true,
            b'+' | b'=' => plus_eq = true,
            _ => {}
        }
    }
    if space || (colon && v.contains("://")) || path_like(v, slash, plus_eq) || number_like(v) || email_like(v) {
        return false;
    }
    // One pass: most values that are not secrets are words, told here.
    let shape = Shape::of(v);
    let verdict = match family {
        Family::Password => {
            if shape.symbols + shape.digits > 0 && shape.letters > 0 {
                // `hunter2!`, `c7%kQ2!x`, `Tr0ub4dor&3`: unless it is a name of words and a number (`version2`).
                !(shape.symbols == 0 && camel(v) && shape.wordy())
            } else if shape.letters == 0 {
                // All digits or symbols: a PIN of 8 or more, or symbols mixed with digits.
                shape.digits >= 8 || (shape.symbols > 0 && shape.digits > 0 && v.len() >= 8)
            } else {
                // Letters only: random-looking, or a word where a literal stands (a `.env` line);
                // a word counts only in small letters (`supersecret`), a capital or another
                // script is a label (`"password": "Contraseña"` in a translation file).
                !type_word(v) && (!shape.wordy() || (literal && v.bytes().all(|c| c.is_ascii_lowercase())))
            }
        }
        Family::Secret | Family::Key => {
            let floor = if family == Family::Key {
                3.2
            } else if v.len() >= 16 {
                3.0
            } else {
                2.5
            };
            // Hex, base64, random letters and digits: two classes, or one long run of random letters.
            !shape.wordy()
                && (shape.classes() >= 2 || (shape.letters >= 20 && !has_any(v, b".-_")))
                && entropy(v) > floor
        }
    };
    verdict && !(placeholder(v) || code_like(v) || (structured(v) && !(literal && family == Family::Password)))
}

/// Mostly pronounceable words (a name in code, a sentence), not random characters.
pub fn wordy(s: &str) -> bool {
    Shape::of(s).wordy()
}

/// A generated password with no name to tell it: letters of both cases,
/// digits and symbols, no word, entropy above 4 bits.
pub fn generated(v: &str) -> bool {
    let hash = v.get(..4).is_some_and(|h| {
        h.eq_ignore_ascii_case("sha1")
            || h.eq_ignore_ascii_case("sha2")
            || h.eq_ignore_ascii_case("sha3")
            || h.eq_ignore_ascii_case("sha5")
            || h.eq_ignore_ascii_case("md5-")
    });
    if hash || !has_any(v, b"!@#$%^&*~") {
        return false;
    }
    let shape = Shape::of(v);
    shape.lower > 0
        && shape.upper > 0
        && shape.digits > 0
        && !has_any(v, b" /\\<>(){}:")
        && !shape.wordy()
        && entropy(v) > 4.0
}

/// Words and numbers joined by separators (`oauth-2025-04-20`,
/// `copy-on-write`, `CONFLICT|10`, `1440*60*1e3`, `425:export`): every part
/// a pronounceable word, a number, or at most three characters. A random
/// value has a part that is neither (`7x#k!p@2m`, `a8f3e2c1`).
fn structured(v: &str) -> bool {
    let parts = v.split(|c: char| c.is_ascii() && b"-_./:|*+,@=#!?~".contains(&(c as u8)));
    let (mut n, mut long) = (0, 0);
    for p in parts.filter(|p| !p.is_empty()) {
        n += 1;
        let b = p.as_bytes();
        let word = b.iter().all(u8::is_ascii_digit) || (b.iter().all(u8::is_ascii_alphabetic) && Shape::of(p).wordy());
        if b.len() > 3 && !word {
            return false;
        }
        if b.len() > 3 {
            long += b.len();
        }
    }
    n > 1 && long * 2 >= v.len()
}

/// A value's make-up: how many characters of each class, and how many of
/// its letters are in pronounceable words (the mark of a name in code, a
/// path, a sentence; random letters rarely make one).
struct Shape {
    lower: usize,
    upper: usize,
    digits: usize,
    symbols: usize,
    letters: usize,
    word_letters: usize,
    other: usize,
}

impl Shape {
    fn of(v: &str) -> Shape {
        let mut s = Shape { lower: 0, upper: 0, digits: 0, symbols: 0, letters: 0, word_letters: 0, other: 0 };
        let b = v.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_alphabetic() {
                // One word: an optional capital, then letters of one case (`Pass`, `Input`, `PASS`, `pass`).
                let start = i;
                i += 1;
                if c.is_ascii_uppercase() && i < b.len() && b[i].is_ascii_uppercase() {
                    while i < b.len()
                        && b[i].is_ascii_uppercase()
                        && !(i + 1 < b.len() && b[i + 1].is_ascii_lowercase())
                    {
                        i += 1;
                    }
                } else {
                    while i < b.len() && b[i].is_ascii_lowercase() {
                        i += 1;
                    }
                }
                let w = &b[start..i];
                s.letters += w.len();
                s.upper += w.iter().filter(|c| c.is_ascii_uppercase()).count();
                s.lower += w.iter().filter(|c| c.is_ascii_lowercase()).count();
                if pronounceable(w) {
                    s.word_letters += w.len();
                }
                continue;
            }
            // A JSON or JavaScript escape (`\u2026`, `\n`) is one character of text.
            if c == b'\\'
                && b.get(i + 1) == Some(&b'u')
                && b.len() >= i + 6
                && b[i + 2..i + 6].iter().all(u8::is_ascii_hexdigit)
            {
                s.other += 1;
                i += 6;
                continue;
            }
            if c.is_ascii_digit() {
                s.digits += 1;
            } else if c >= 0x80 {
                // Non-ASCII letters (a name in another script) count as words.
                s.other += 1;
            } else if !matches!(c, b'_' | b'-' | b'.' | b' ') {
                s.symbols += 1;
            }
            i += 1;
        }
        s
    }

    fn classes(&self) -> usize {
        usize::from(self.lower > 0)
            + usize::from(self.upper > 0)
            + usize::from(self.digits > 0)
            + usize::from(self.symbols > 0)
    }

    /// Mostly words: at least 70% of its letters in pronounceable words,
    /// digits under a third of the letters, or text in another script.
    fn wordy(&self) -> bool {
        if self.other > 0 && self.other >= self.letters {
            return true;
        }
        self.letters > 0 && self.word_letters * 10 >= self.letters * 7 && self.digits * 3 <= self.letters.max(3)
    }
}

/// A word people could say: three letters or more, a vowel (one in five
/// past six letters), no five consonants in a row. Random letters of one case rarely pass
/// past six letters (`qurjjqoqkctarpm`); `Pass`, `Input`, `config` do.
fn pronounceable(w: &[u8]) -> bool {
    if w.len() < 3 {
        return false;
    }
    let vowel = |c: u8| matches!(c | 0x20, b'a' | b'e' | b'i' | b'o' | b'u' | b'y');
    let vowels = w.iter().filter(|&&c| vowel(c)).count();
    let mut run = 0;
    let mut longest = 0;
    for &c in w {
        run = if vowel(c) { 0 } else { run + 1 };
        longest = longest.max(run);
    }
    let enough = if w.len() <= 6 { vowels >= 1 } else { vowels * 5 >= w.len() };
    enough && longest < 5
}

/// A value that stands for a secret rather than being one: a variable or a
/// template (`$X`, `${X}`, `{{ x }}`, `%X%`, `%s`, `<x>`), a mask
/// (`****`, `xxxx`, `…`), or the usual filler words.
pub fn placeholder(v: &str) -> bool {
    let b = v.as_bytes();
    if matches!(b.first(), Some(b'$' | b'<' | b'{' | b'['))
        || ["${", "{{", "#{", "%{", "...", "…", "redacted", "REDACTED", "Redacted"].iter().any(|m| v.contains(m))
    {
        return true;
    }
    // `%NAME%` (Windows), `%s`, `%(name)s` (printf), not a password that starts with `%`.
    if b.first() == Some(&b'%') && (b.last() == Some(&b'%') || v.len() <= 3 || v.starts_with("%(")) {
        return true;
    }
    if b.iter().all(|&c| matches!(c, b'*' | b'x' | b'X' | b'#' | b'.' | b'-' | b'_')) {
        return true;
    }
    [
        "changeme",
        "change_me",
        "password",
        "passw0rd",
        "secret",
        "redacted",
        "placeholder",
        "example",
        "dummy",
        "yourpassword",
        "mypassword",
        "notasecret",
        "none",
        "null",
        "undefined",
        "true",
        "false",
        "required",
        "optional",
    ]
    .iter()
    .any(|w| v.eq_ignore_ascii_case(w))
        || v.get(..5).is_some_and(|h| h.eq_ignore_ascii_case("your_") || h.eq_ignore_ascii_case("your-"))
}

/// A file path: absolute, relative, home, a drive; or slashes between
/// words, or a file name at the end (`logs/2026/app.log`).
/// `slash`, `plus_eq`: whether `v` holds a `/`, and a `+` or `=`.
fn path_like(v: &str, slash: bool, plus_eq: bool) -> bool {
    if !slash && !v.starts_with('~') && v.get(1..3) != Some(":\\") {
        return false;
    }
    // Base64 may start with `/` (`AccountKey=/RPD8…`): a path's parts are not 24 random characters.
    // (Byte loops here, not `split`: this runs on every `PASS src/…` line of a test log.)
    let b = v.as_bytes();
    let mut random_part = false;
    let mut from = 0;
    for k in 0..=b.len() {
        if k == b.len() || b[k] == b'/' {
            random_part |= k - from > 24 && !Shape::of(&v[from..k]).wordy();
            from = k + 1;
        }
    }
    if (v.starts_with(['/', '~']) || v.starts_with("./") || v.starts_with("../") || v.get(1..3) == Some(":\\"))
        && !random_part
    {
        return true;
    }
    if !slash || plus_eq {
        return false;
    }
    let last = &b[b.iter().rposition(|&c| c == b'/').map_or(0, |p| p + 1)..];
    let extension = last.iter().rposition(|&c| c == b'.').is_some_and(|dot| {
        let ext = &last[dot + 1..];
        dot > 0 && (1..=8).contains(&ext.len()) && ext.iter().all(u8::is_ascii_alphanumeric)
    });
    extension
        || v.split('/').filter(|s| !s.is_empty()).all(|s| s.bytes().all(|c| c.is_ascii_digit()) || Shape::of(s).wordy())
}

/// Digits and the punctuation of dates, times, versions, addresses and sizes.
fn number_like(v: &str) -> bool {
    // A version range (`^3.972.82`, `~1.2`, `>=2.0`, `v1.4.0`).
    let v = v.trim_start_matches(['^', '~', '<', '>', '=', 'v', 'V']);
    let digits = v.bytes().filter(u8::is_ascii_digit).count();
    // Arithmetic of numbers (`1440*60*1e3`, `0x1F+2`).
    if digits * 2 >= v.len()
        && v.bytes().all(|c| c.is_ascii_digit() || b"*+-/._eExX()".contains(&c))
        && v.bytes().any(|c| c == b'*')
    {
        return true;
    }
    v.bytes().any(|c| c.is_ascii_digit())
        && v.bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b':' | b'_' | b'/' | b',' | b'T' | b'Z' | b'+'))
        && v.bytes().filter(|c| c.is_ascii_digit()).count() < 12
}

fn email_like(v: &str) -> bool {
    v.split_once('@').is_some_and(|(user, host)| !user.is_empty() && host.contains('.') && Shape::of(host).wordy())
}

/// An expression of code: a call, a member access of names, an index, an
/// operator between names (`options.apiKey`, `getToken()`, `raw.token`,
/// `env["X"]`, `a||b`), or one name in snake or camel case.
fn code_like(v: &str) -> bool {
    let v = v.trim_end_matches(|c: char| c.is_ascii() && b"?!;,:".contains(&(c as u8)));
    if v.is_empty() {
        return false;
    }
    // Code's two-character operators (`a||b`, `x?.y`, `a??b`, `=>`).
    if ["||", "&&", "??", "?.", "=>", "===", "!=="].iter().any(|o| v.contains(o)) {
        return true;
    }
    // A regular expression (`^-?(?:0|[1-9][0-9]*)$`).
    if (v.starts_with('^') || v.ends_with('$')) && has_any(v, b"[(\\") {
        return true;
    }
    if has_any(v, b"([") && v.bytes().any(|c| c.is_ascii_alphabetic()) {
        let head: &str = &v[..v.bytes().position(|c| c == b'(' || c == b'[').unwrap_or(v.len())];
        let chain = head.len() >= 3
            && head.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'#'))
            && head.as_bytes()[0].is_ascii_alphabetic() | matches!(head.as_bytes()[0], b'_' | b'$' | b'#');
        if chain && (Shape::of(head).wordy() || has_any(head, b"_.") || camel(head)) {
            return true;
        }
    }
    // A member chain (`options.apiKey`, `a?.b`, `a || b.c`): names joined by `.` and code's operators.
    let ident = |p: &str| {
        let b = p.as_bytes();
        !b.is_empty()
            && (b[0].is_ascii_alphabetic() || b[0] == b'_' || b[0] == b'$')
            && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
    };
    let names = v.split('.').all(|p| ident(p) && (p.len() <= 3 || Shape::of(p).wordy()));
    if v.contains('.') && names {
        return true;
    }
    // One name: snake or screaming case (`DB_PASSWORD`, `api_key_value`), words only.
    v.contains('_') && ident(v) && v.split('_').filter(|s| !s.is_empty()).all(|s| s.len() <= 3 || Shape::of(s).wordy())
}

/// A name in camel case (`newPassword2`): a lower-case letter before a capital.
fn camel(v: &str) -> bool {
    v.as_bytes().windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

/// A type or a keyword where a password's value would be (`password: string`).
fn type_word(v: &str) -> bool {
    [
        "string", "number", "boolean", "bool", "object", "str", "bytes", "text", "varchar", "empty", "blank", "hidden",
        "masked",
    ]
    .iter()
    .any(|w| v.eq_ignore_ascii_case(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_by_their_look() {
        for (v, f) in [
            ("c7%kQ2!xLp", Family::Password),
            ("%-v!Wq9#zz", Family::Password),
            ("hunter2!x", Family::Password),
            ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9Q3x7Lk2", Family::Secret),
            ("a8f9d7e6c5b4a3f2e1d0", Family::Secret),
            ("nzcqaxx439qurjjqoqkctarpm7ct24rn", Family::Secret),
            ("8f3kQ9zL2mX7vB4nR1tY6wP0", Family::Key),
            ("django-insecure-7x#k!p@2m$9qz&w", Family::Secret),
        ] {
            assert!(is_secret(v, f, false), "{v}");
        }
        assert!(is_secret("supersecret", Family::Password, true));
    }

    #[test]
    fn words_names_paths_numbers_are_not() {
        for (v, f, literal) in [
            ("PassInput", Family::Password, false),
            ("Pass", Family::Password, false),
            ("string", Family::Password, true),
            ("logs/2026/app.log", Family::Key, true),
            ("data/2026/11/part-00001-a8f3e2c1.parquet", Family::Key, true),
            ("auth.login.title", Family::Key, true),
            ("options.apiKey", Family::Secret, false),
            ("process.env.DB_PASSWORD", Family::Password, false),
            ("getToken()", Family::Secret, false),
            ("DB_PASSWORD", Family::Password, true),
            ("2024-01-01", Family::Secret, true),
            ("${SECRET_KEY}", Family::Secret, true),
            ("%APPDATA%", Family::Password, true),
            ("changeme", Family::Password, true),
            ("dev@example.com", Family::Password, true),
            ("supersecret", Family::Password, false),
        ] {
            assert!(!is_secret(v, f, literal), "{v}");
        }
    }
}
