//! The rules: which secrets the guard withholds, each with the pattern that
//! confirms it and where that pattern comes from.
//!
//! The patterns are gitleaks' default rules (`config/gitleaks.toml` of
//! gitleaks v8, the copy at commit 009e025a; the older copy at 420a0f55 where
//! named), written for `regex-lite`, which matches in linear time. Where a
//! rule here is wider than gitleaks' (a length range instead of one length,
//! a character class of an older copy), the comment says so and why: a
//! placeholder in a request costs the judge one line of context, a secret let
//! through costs the user the secret.
//!
//! Rules without a gitleaks counterpart (credentials in URLs, `Authorization`
//! headers, short passwords) are this project's and say so; gitleaks' default
//! configuration has none of them (its generator lists "url - basic auth" as
//! a to-do).

use regex_lite::Regex;

/// A provider rule: tried on a token that starts with one of `prefixes`.
pub struct Rule {
    /// The placeholder's kind: `[secret: <kind>]`.
    pub kind: &'static str,
    /// Case-sensitive prefixes of the token (after any leading `/`).
    pub prefixes: &'static [&'static str],
    /// The confirming pattern; its first capture group, else the whole
    /// match, is the secret.
    pub pattern: &'static str,
    /// gitleaks' entropy floor for the rule (bits per character); the secret
    /// must be above it. 0 for none.
    pub entropy: f64,
}

/// Provider formats, tried in this order (a longer prefix before a shorter one).
pub const RULES: &[Rule] = &[
    // gitleaks `aws-access-token` (entropy 3). The tail is the older copy's
    // `[A-Z0-9]{16}` (420a0f55), wider than today's `[A-Z2-7]{16}`.
    Rule {
        kind: "aws-access-key",
        prefixes: &["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
        pattern: r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b",
        entropy: 3.0,
    },
    // gitleaks `github-fine-grained-pat` (`github_pat_\w{82}`), any length from 60.
    Rule { kind: "github-token", prefixes: &["github_pat_"], pattern: r"(github_pat_\w{60,255})", entropy: 3.0 },
    // gitleaks `github-pat`, `github-oauth`, `github-app-token`,
    // `github-refresh-token` (`gh[pousr]_` and 36 characters, entropy 3), 30 to 255 here.
    Rule {
        kind: "github-token",
        prefixes: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        pattern: r"(gh[pousr]_[0-9a-zA-Z]{30,255})",
        entropy: 3.0,
    },
    // gitleaks' 15 `gitlab-*` rules: `glpat-`, `glptt-`, `glrt-`, `glcbt-`,
    // `gldt-`, `glffct-`, `glft-`, `glimt-`, `glagent-`, `gloas-`, `glsoat-`
    // with at least 20 characters, and `GR1348941` (runner registration).
    Rule {
        kind: "gitlab-token",
        prefixes: &[
            "glpat-", "glptt-", "glrt-", "glcbt-", "gldt-", "glffct-", "glft-", "glimt-", "glagent-", "gloas-",
            "glsoat-",
        ],
        pattern: r"(gl(?:pat|ptt|rt|cbt|dt|ffct|ft|imt|agent|oas|soat)-[0-9a-zA-Z_.\-]{20,300})",
        entropy: 3.0,
    },
    Rule { kind: "gitlab-token", prefixes: &["GR1348941"], pattern: r"(GR1348941[\w\-]{20,})", entropy: 3.0 },
    // gitleaks `slack-bot-token`, `slack-user-token`, `slack-legacy-*`,
    // `slack-config-*` (`xox[bpeaors]-` with digits and letters, entropy 2).
    Rule { kind: "slack-token", prefixes: &["xox"], pattern: r"(xox[abeoprs]-[0-9A-Za-z.\-]{10,300})", entropy: 2.0 },
    // gitleaks `slack-app-token`.
    Rule { kind: "slack-token", prefixes: &["xapp-"], pattern: r"(?i)(xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)", entropy: 2.0 },
    // gitleaks `slack-webhook-url` (43 to 56 characters of path; 20 or more here).
    Rule {
        kind: "slack-webhook",
        prefixes: &["hooks.slack.com/"],
        pattern: r"(hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,300})",
        entropy: 0.0,
    },
    // gitleaks `stripe-access-token` (entropy 2).
    Rule {
        kind: "stripe-key",
        prefixes: &["sk_test_", "sk_live_", "sk_prod_", "rk_test_", "rk_live_", "rk_prod_"],
        pattern: r"\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})",
        entropy: 2.0,
    },
    // gitleaks `anthropic-api-key`, `anthropic-admin-api-key` (93 characters
    // and `AA`); its `anthropic.go` adds `sk-ant-oat01-`, `sk-ant-ort01-` with
    // 40 or more. Any of the four with 32 or more here.
    Rule {
        kind: "anthropic-key",
        prefixes: &["sk-ant-"],
        pattern: r"(sk-ant-(?:api03|admin01|oat01|ort01)-[a-zA-Z0-9_\-]{32,300})",
        entropy: 0.0,
    },
    // gitleaks `openai-api-key` requires the marker `T3BlbkFJ` inside the key;
    // keys are seen without it (project and service-account keys), so any
    // `sk-` key of 32 or more characters of the format, entropy 3 as gitleaks.
    Rule {
        kind: "openai-key",
        prefixes: &["sk-"],
        pattern: r"\b(sk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_\-]{32,300})",
        entropy: 3.0,
    },
    // gitleaks `gcp-api-key` (entropy 4; its allowlist of 16 example keys left out).
    Rule { kind: "google-api-key", prefixes: &["AIza"], pattern: r"\b(AIza[\w\-]{35})", entropy: 3.0 },
    // gitleaks `npm-access-token` (entropy 2).
    Rule { kind: "npm-token", prefixes: &["npm_"], pattern: r"(?i)\b(npm_[a-z0-9]{36})", entropy: 2.0 },
    // gitleaks `jwt` (entropy 3).
    Rule {
        kind: "jwt",
        prefixes: &["eyJ"],
        pattern: r"\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/\\_\-]{17,}\.(?:[a-zA-Z0-9/\\_\-]{10,}={0,2})?)",
        entropy: 3.0,
    },
];

/// The shortest secret any rule above matches (`xapp-1-A1-1-a1`, 14
/// characters; the others take 20 or more): a shorter token is tried against
/// none (tested to stay true).
pub const PROVIDER_MIN: usize = 14;

/// The first bytes of every prefix above: a token that starts otherwise is
/// tried against no provider rule (tested to stay true).
pub const PREFIX_STARTS: &[u8] = b"AgGxhsrne";

/// gitleaks `private-key`: a PEM or OpenSSH private key block, from its
/// `BEGIN` line through its `END` line.
pub const PRIVATE_KEY: &str =
    r"(?i)-----BEGIN[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]{64,}?KEY(?: BLOCK)?-----";

/// gitleaks `generic-api-key` (entropy 3.5): a name holding `key`, `secret`,
/// `token`, `password` and the like, an assignment, and a value.
pub const GENERIC: &str = r#"(?i)[\w.\-]{0,50}?(?:access|auth|api|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.\-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[`'"\s=]{0,5}([\w.=\-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[`'"\s;,)\]}]|\\[nr]|$)"#;

/// gitleaks' `generic-api-key` keywords (its prefilter), lower case.
pub const GENERIC_KEYWORDS: &[&str] =
    &["access", "api", "auth", "key", "credential", "creds", "passwd", "password", "secret", "token"];

/// The entropy floor of `GENERIC` (gitleaks).
pub const GENERIC_ENTROPY: f64 = 3.5;

/// This project's: a password too short or too plain for `GENERIC` (gitleaks
/// asks 10 characters and entropy 3.5, so `DB_PASSWORD=hunter2!` passes it),
/// named `password`, `passwd`, `pwd` or `…pass`: 6 or more characters up to a
/// space, quote or separator, not only letters, entropy above 2.
pub const PASSWORD_KEYWORDS: &[&str] = &["passw", "pwd"];
pub const PASSWORD_MIN: usize = 6;
pub const PASSWORD_ENTROPY: f64 = 2.0;

/// This project's: the token after `Bearer`, `Basic` or `Token` in an
/// `Authorization` header (gitleaks has this only inside `curl` commands:
/// `curl-auth-header`, entropy 2.75), 8 or more characters.
pub const AUTH_MIN: usize = 8;
pub const AUTH_ENTROPY: f64 = 2.75;

/// Compiles a built-in pattern; they are tested to compile, so a failure is
/// a bug that must not take the pass down: it matches nothing.
pub fn compile(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}
