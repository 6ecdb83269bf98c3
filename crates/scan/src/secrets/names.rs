//! Names that hold secrets: which name makes the value assigned to it a
//! secret, and how sure the name alone is.
//!
//! For: the keyword families (gitleaks' `generic-api-key` keywords, widened
//! with the names credential files and other languages use). Not for: the
//! value's own look (`value`).

/// How much a name says about its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `password`, `passwd`, `pwd`, `DB_PASS`, `パスワード`: any value that is
    /// not a word, a name in code or a path.
    Password,
    /// `secret`, `token`, `api_key`, `credential`, `auth`, `private_key`:
    /// a random-looking value of 8 or more.
    Secret,
    /// `key`, `access`, `api` alone: a random-looking value of 16 or more
    /// (`"Key": "logs/app.log"` and an i18n `"key"` are not).
    Key,
}

/// Names of passwords in other languages (UTF-8, matched as bytes), `|` between them.
const PASSWORD_WORDS: &str = "パスワード|密码|密碼|口令|пароль|contraseña|contrasena|senha|passwort|kennwort|wachtwoord|motdepasse|mot_de_passe|parola|hasło|haslo|şifre|sifre|비밀번호|암호|salasana|lösenord|losenord|adgangskode|jelszó|heslo|parool";

/// Names of secrets and tokens in other languages, `|` between them.
const SECRET_WORDS: &str =
    "トークン|シークレット|秘密|密钥|秘钥|令牌|токен|секрет|ключ|clave|chave|segredo|geheimnis|jeton|토큰|비밀";

/// Extensions of source and data files, whose names are not secrets' names.
const FILE_EXTENSIONS: &[&str] = &[
    "js", "mjs", "cjs", "ts", "mts", "cts", "tsx", "jsx", "json", "md", "py", "rb", "go", "rs", "java", "kt", "c", "h",
    "cc", "cpp", "hpp", "cs", "php", "swift", "yaml", "yml", "toml", "ini", "txt", "html", "css", "scss", "sh", "map",
    "d", "lock", "xml", "log", "sql", "vue", "svelte", "lua", "pl", "ex", "exs", "erl", "scala", "dart", "r", "proto",
    "cfg", "conf",
];

/// Words that end in `pass` and name no password.
const NOT_PASS: &[&str] = &["bypass", "compass", "surpass", "trespass", "overpass", "underpass", "encompass"];

/// Words that start with `key` and name no key.
const NOT_KEY: &[&str] =
    &["keyboard", "keyword", "keys", "keyframe", "keycode", "keyof", "keyup", "keydown", "keypress"];

/// A capital that starts a word of small letters at `i` (`passFile`'s `File`).
fn camel_word_at(name: &[u8], i: usize) -> bool {
    name[i].is_ascii_uppercase() && name.get(i + 1).is_some_and(u8::is_ascii_lowercase)
}

/// The family of the name `name` (its last 64 bytes are read), if any.
pub fn family(name: &[u8]) -> Option<Family> {
    let name = &name[name.len().saturating_sub(64)..];
    // Most names hold no keyword: every keyword starts with one of these
    // pairs of letters (or is another script's), looked at once per byte.
    let maybe = name.windows(2).any(|w| {
        matches!(
            (w[0] | 0x20, w[1] | 0x20),
            (b'p', b'a' | b'w' | b'r')
                | (b's', b'e' | b'i')
                | (b't', b'o')
                | (b'a', b'p' | b'c' | b'u')
                | (b'c', b'r')
                | (b'j', b'w')
                | (b'd', b's')
                | (b'k', b'e')
        ) || w[0] >= 0x80
    });
    if !maybe {
        return None;
    }
    // A file's name (`qwen-token-plan.json`, `auth-storage.js` in `grep -n` output) names no secret.
    if let Some(dot) = name.iter().rposition(|&c| c == b'.') {
        let ext = &name[dot + 1..];
        if FILE_EXTENSIONS.iter().any(|e| ext.eq_ignore_ascii_case(e.as_bytes())) {
            return None;
        }
    }
    let mut best: Option<Family> = None;
    let mut raise = |f: Family| {
        best = Some(match (best, f) {
            (Some(Family::Password), _) | (_, Family::Password) => Family::Password,
            (Some(Family::Secret), _) | (_, Family::Secret) => Family::Secret,
            _ => Family::Key,
        })
    };
    let at = |i: usize, w: &[u8]| name.len() - i >= w.len() && name[i..i + w.len()].eq_ignore_ascii_case(w);
    // A short keyword starts a word: the name's start, after a non-letter, a
    // capital after a small letter (`myApiKey`), or in capitals (`PGPASS`);
    // not inside a word (`wrapIteration`, `monkey`).
    let starts_word = |i: usize| {
        i == 0
            || !name[i - 1].is_ascii_alphabetic()
            || (name[i - 1].is_ascii_lowercase() && name[i].is_ascii_uppercase())
            || (name[i - 1].is_ascii_uppercase() && name[i].is_ascii_uppercase())
    };
    // `pass` ends its word (`DB_PASS`, `PGPASS`, `pass`), not `passFile`, `passenger`.
    let ends_word = |end: usize| {
        end == name.len() || !(name[end].is_ascii_lowercase() || name[end].is_ascii_digit() || camel_word_at(name, end))
    };
    let ends_with_any = |i: usize, len: usize, words: &[&str]| {
        words.iter().any(|w| i + len >= w.len() && at(i + len - w.len(), w.as_bytes()))
    };
    let mut non_ascii = false;
    for i in 0..name.len() {
        let c = name[i] | 0x20;
        if c >= 0x80 {
            non_ascii = true;
            continue;
        }
        let word = starts_word(i);
        let found = match c {
            b'p' if at(i, b"passw") || at(i, b"pwd") || at(i, b"passphrase") => Some(Family::Password),
            b'p' if at(i, b"pass") && word && ends_word(i + 4) && !ends_with_any(i, 4, NOT_PASS) => {
                Some(Family::Password)
            }
            b'p' if at(i, b"private_key") || at(i, b"privatekey") || at(i, b"private-key") => Some(Family::Secret),
            b's' if at(i, b"secret") && !at(i, b"secretary") => Some(Family::Secret),
            // Azure's shared access signature (`sig=` in a URL's query).
            b's' if at(i, b"sig") && word && i + 3 == name.len() => Some(Family::Secret),
            b't' if at(i, b"token") && !at(i, b"tokeniz") && !at(i, b"tokens") => Some(Family::Secret),
            b'a' if word
                && ["apikey", "api_key", "api-key", "accesskey", "access_key"].iter().any(|w| at(i, w.as_bytes())) =>
            {
                Some(Family::Secret)
            }
            b'a' if word && at(i, b"auth") && (at(i, b"authoriz") || !at(i, b"author")) => Some(Family::Secret),
            b'a' if word && (at(i, b"api") || at(i, b"access")) => Some(Family::Key),
            b'c' if at(i, b"credential") || at(i, b"creds") || (at(i, b"cred") && i + 4 == name.len()) => {
                Some(Family::Secret)
            }
            b'j' if word && at(i, b"jwt") => Some(Family::Secret),
            // Sentry's DSN holds its key.
            b'd' if word && at(i, b"dsn") && i + 3 == name.len() => Some(Family::Secret),
            b'k' if word && at(i, b"key") && !NOT_KEY.iter().any(|w| at(i, w.as_bytes())) => Some(Family::Key),
            _ => None,
        };
        if let Some(f) = found {
            raise(f);
        }
    }
    if non_ascii {
        if PASSWORD_WORDS.split('|').any(|w| contains(name, w.as_bytes())) {
            raise(Family::Password);
        } else if SECRET_WORDS.split('|').any(|w| contains(name, w.as_bytes())) {
            raise(Family::Secret);
        }
    }
    best
}

/// The placeholder's kind for a value assigned to `name` of `family`.
pub fn kind(name: &[u8], family: Family) -> &'static str {
    if contains_ignore_case(name, b"aws") && contains_ignore_case(name, b"secret") {
        "aws-secret-key"
    } else if family == Family::Password {
        "password"
    } else {
        "generic-secret"
    }
}

/// A name that names the secret whose value follows on the next line or in
/// the next field (`- name: DB_PASSWORD` / `value: …`, `{"Name": …, "Value": …}`).
pub fn names_next(name: &[u8]) -> bool {
    bare_is_one_of(
        name,
        b"nkpves",
        &["name", "key", "parameterkey", "parameter_name", "variable", "env_name", "secretname", "secret_name"],
    )
}

/// A name that holds the value of the name before it (`value:`).
pub fn is_value(name: &[u8]) -> bool {
    bare_is_one_of(name, b"vps", &["value", "parametervalue", "secretvalue", "secret_value", "val", "secretstring"])
}

/// Words that introduce a credential after a space: the `Authorization`
/// schemes (RFC 7235 and the providers' own: `Bot` for Discord, `SSWS` for Okta).
pub fn scheme(word: &[u8]) -> bool {
    if !(3..=6).contains(&word.len()) {
        return false;
    }
    ["bearer", "basic", "bot", "token", "apikey", "ssws", "digest", "key"]
        .iter()
        .any(|w| word.eq_ignore_ascii_case(w.as_bytes()))
}

/// Whether `name`, without a list marker or leading dots (`- name`,
/// `.value`), is one of `words` (ASCII case ignored); `starts` holds their
/// first letters, so most names are turned down by one look.
fn bare_is_one_of(name: &[u8], starts: &[u8], words: &[&str]) -> bool {
    let start = name.iter().position(|c| !matches!(c, b'-' | b' ' | b'.')).unwrap_or(name.len());
    let n = &name[start..];
    n.len() >= 3
        && n.len() <= 16
        && starts.contains(&(n[0] | 0x20))
        && words.iter().any(|w| n.eq_ignore_ascii_case(w.as_bytes()))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

pub fn contains_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        for (n, f) in [
            ("DB_PASSWORD", Some(Family::Password)),
            ("PGPASS", Some(Family::Password)),
            ("pass", Some(Family::Password)),
            ("passFile", None),
            ("bypass", None),
            ("パスワード", Some(Family::Password)),
            ("contraseña", Some(Family::Password)),
            ("aws_secret_access_key", Some(Family::Secret)),
            ("HF_TOKEN", Some(Family::Secret)),
            ("max_tokens", None),
            ("apiKey", Some(Family::Secret)),
            ("author", None),
            ("Authorization", Some(Family::Secret)),
            ("Key", Some(Family::Key)),
            ("keyboard", None),
            ("monkey", None),
            ("Provides", None),
            ("токен", Some(Family::Secret)),
        ] {
            assert_eq!(family(n.as_bytes()), f, "{n}");
        }
        assert_eq!(kind(b"aws_secret_access_key", Family::Secret), "aws-secret-key");
    }
}
