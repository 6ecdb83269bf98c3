//! Provider key formats: a literal prefix, then a body of one alphabet and a
//! length range. Tried by the scan at the start of every word whose first
//! byte some prefix starts with.
//!
//! For: the formats that tell a secret by its own shape, wherever it stands
//! (an argument, a URL, a call, prose). Not for: values that are secrets only
//! because of the name they are assigned to (`names`, `value`).
//!
//! The facts (prefixes, alphabets, lengths) are those of gitleaks' default
//! rules (`config/gitleaks.toml`, v8) and of the providers' own token
//! documentation; the rule ids are in the comments. A range here is usually
//! wider than the rule's exact length: a longer or shorter token of a
//! provider's prefix and alphabet is still that provider's, and a placeholder
//! costs the judge one word where a secret let through costs the user the
//! secret. Formats with no prefix (Discord and Telegram bot tokens, Mailchimp,
//! Terraform Cloud, Azure AD client secrets) are shapes in `scan`.

/// The alphabet of a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// `[A-Za-z0-9]`
    Alnum,
    /// `[A-Za-z]`
    Letters,
    /// `[A-Z0-9]`
    UpperDigits,
    /// `[A-Z0-9-]`
    UpperDash,
    /// `[a-z0-9]`
    LowerDigits,
    /// `[0-9a-fA-F]`
    Hex,
    /// `[0-9a-fA-F-]`
    HexDash,
    /// `[A-Za-z0-9_-]`
    UrlSafe,
    /// `[A-Za-z0-9_.-]`
    Dotted,
    /// `[A-Za-z0-9+/=_-]` (base64, standard or URL-safe, with padding)
    Base64,
    /// `[A-Za-z0-9/+_-]` (a webhook's path)
    Path,
}

impl Body {
    pub fn has(self, c: u8) -> bool {
        match self {
            Body::Alnum => c.is_ascii_alphanumeric(),
            Body::Letters => c.is_ascii_alphabetic(),
            Body::UpperDigits => c.is_ascii_uppercase() || c.is_ascii_digit(),
            Body::UpperDash => c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'-',
            Body::LowerDigits => c.is_ascii_lowercase() || c.is_ascii_digit(),
            Body::Hex => c.is_ascii_hexdigit(),
            Body::HexDash => c.is_ascii_hexdigit() || c == b'-',
            Body::UrlSafe => c.is_ascii_alphanumeric() || c == b'_' || c == b'-',
            Body::Dotted => c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'),
            Body::Base64 => c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'_' | b'-'),
            Body::Path => c.is_ascii_alphanumeric() || matches!(c, b'/' | b'+' | b'_' | b'-'),
        }
    }
}

/// A provider format.
pub struct Provider {
    /// The placeholder's kind, `[secret: <kind>]`, as its place in [`KINDS`]
    /// (a byte where a string would take eight: the table ships in the `.wasm`).
    kind: u8,
    /// Case-sensitive.
    pub prefix: &'static str,
    pub body: Body,
    /// The body's length range, prefix excluded. A longer run of the body's
    /// alphabet is another thing (a hash), unless `max` is `ANY`.
    pub min: u8,
    pub max: u8,
}

/// No upper bound, as stored (a range's end above 254 reads as none).
pub const ANY: u8 = u8::MAX;

/// No upper bound, as the table writes it.
const OPEN: u16 = u16::MAX;

impl Provider {
    /// The placeholder's kind.
    pub fn kind(&self) -> &'static str {
        KINDS[self.kind as usize]
    }
}

/// Every provider's kind, once.
pub const KINDS: &[&str] = &[
    "aws-access-key",
    "github-token",
    "gitlab-token",
    "slack-token",
    "slack-webhook",
    "stripe-key",
    "anthropic-key",
    "openai-key",
    "google-api-key",
    "google-oauth",
    "npm-token",
    "pypi-token",
    "rubygems-token",
    "nuget-key",
    "clojars-token",
    "huggingface-token",
    "sendgrid-key",
    "discord-webhook",
    "twilio-key",
    "mailgun-key",
    "shopify-token",
    "digitalocean-token",
    "heroku-key",
    "newrelic-key",
    "sentry-token",
    "doppler-token",
    "vault-token",
    "databricks-token",
    "linear-key",
    "notion-token",
    "atlassian-token",
    "cloudflare-key",
    "square-token",
    "facebook-token",
    "planetscale-token",
    "supabase-key",
    "postman-key",
    "grafana-token",
    "pulumi-token",
    "age-secret-key",
    "docker-token",
    "crates-token",
    "1password-secret-key",
    "certificate",
    "jwt",
    "private-key",
    "alibaba-key",
    "dynatrace-token",
    "easypost-key",
    "flutterwave-key",
    "frameio-token",
    "duffel-token",
    "dropbox-token",
    "shippo-token",
    "typeform-token",
    "readme-key",
    "prefect-key",
    "scalingo-token",
    "brevo-key",
    "sourcegraph-token",
    "sonar-token",
    "infracost-key",
    "openshift-token",
    "octopus-key",
    "settlemint-token",
    "1password-token",
    "flyio-token",
    "jfrog-key",
    "twitter-token",
    "yandex-key",
    "airtable-token",
    "plaid-token",
    "adobe-secret",
    "defined-networking-key",
    "harness-key",
    "perplexity-key",
    "groq-key",
    "xai-key",
    "replicate-token",
    "render-key",
    "netlify-token",
    "buildkite-token",
    "circleci-token",
    "mapbox-token",
];

/// The place of `name` in [`KINDS`], found when the table is compiled (an
/// unknown kind does not compile).
// Evaluated when the table is built, at compile time: a kind missing from
// `KINDS` fails the build there, and never panics at run time.
#[allow(clippy::panic)]
const fn kind_id(name: &str) -> u8 {
    let mut k = 0;
    while k < KINDS.len() {
        let (a, b) = (KINDS[k].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut i = 0;
            while i < a.len() && a[i] == b[i] {
                i += 1;
            }
            if i == a.len() {
                return k as u8;
            }
        }
        k += 1;
    }
    panic!("a provider's kind is missing from KINDS")
}

const fn p(kind: &'static str, prefix: &'static str, body: Body, min: u8, max: u16) -> Provider {
    let max = if max > 254 { ANY } else { max as u8 };
    let kind = kind_id(kind);
    Provider { kind, prefix, body, min, max }
}

use Body::*;

/// The formats. A longer prefix comes before a shorter one it starts with.
pub const PROVIDERS: &[Provider] = &[
    // gitleaks aws-access-token (and the older copy's wider tail).
    p("aws-access-key", "AKIA", UpperDigits, 16, 16),
    p("aws-access-key", "ASIA", UpperDigits, 16, 16),
    p("aws-access-key", "ABIA", UpperDigits, 16, 16),
    p("aws-access-key", "ACCA", UpperDigits, 16, 16),
    p("aws-access-key", "A3T", UpperDigits, 17, 17),
    // gitleaks github-fine-grained-pat, github-pat, github-oauth, github-app-token, github-refresh-token.
    p("github-token", "github_pat_", Dotted, 60, 255),
    p("github-token", "ghp_", Alnum, 30, 255),
    p("github-token", "gho_", Alnum, 30, 255),
    p("github-token", "ghu_", Alnum, 30, 255),
    p("github-token", "ghs_", Alnum, 30, 255),
    p("github-token", "ghr_", Alnum, 30, 255),
    // gitleaks gitlab-* (13 rules).
    p("gitlab-token", "glpat-", Dotted, 20, 300),
    p("gitlab-token", "glptt-", Dotted, 20, 300),
    p("gitlab-token", "glrt-", Dotted, 20, 300),
    p("gitlab-token", "glcbt-", Dotted, 20, 300),
    p("gitlab-token", "gldt-", Dotted, 20, 300),
    p("gitlab-token", "glffct-", Dotted, 20, 300),
    p("gitlab-token", "glft-", Dotted, 20, 300),
    p("gitlab-token", "glimt-", Dotted, 20, 300),
    p("gitlab-token", "glagent-", Dotted, 20, 300),
    p("gitlab-token", "gloas-", Dotted, 20, 300),
    p("gitlab-token", "glsoat-", Dotted, 20, 300),
    p("gitlab-token", "GR1348941", UrlSafe, 20, 300),
    // gitleaks slack-bot-token, slack-user-token, slack-app-token, slack-config-*, slack-legacy-*.
    p("slack-token", "xoxe.xox", Dotted, 20, 400),
    p("slack-token", "xoxb-", Dotted, 10, 300),
    p("slack-token", "xoxp-", Dotted, 10, 300),
    p("slack-token", "xoxa-", Dotted, 10, 300),
    p("slack-token", "xoxe-", Dotted, 10, 300),
    p("slack-token", "xoxo-", Dotted, 10, 300),
    p("slack-token", "xoxr-", Dotted, 10, 300),
    p("slack-token", "xoxs-", Dotted, 10, 300),
    p("slack-token", "xapp-", Dotted, 10, 300),
    // gitleaks slack-webhook-url.
    p("slack-webhook", "hooks.slack.com/services/", Path, 20, 300),
    p("slack-webhook", "hooks.slack.com/workflows/", Path, 20, 300),
    p("slack-webhook", "hooks.slack.com/triggers/", Path, 20, 300),
    // gitleaks stripe-access-token; Stripe's webhook signing secrets.
    p("stripe-key", "sk_live_", Alnum, 10, 255),
    p("stripe-key", "sk_test_", Alnum, 10, 255),
    p("stripe-key", "sk_prod_", Alnum, 10, 255),
    p("stripe-key", "rk_live_", Alnum, 10, 255),
    p("stripe-key", "rk_test_", Alnum, 10, 255),
    p("stripe-key", "rk_prod_", Alnum, 10, 255),
    p("stripe-key", "whsec_", Base64, 24, 255),
    // gitleaks anthropic-api-key, anthropic-admin-api-key.
    p("anthropic-key", "sk-ant-", UrlSafe, 32, 400),
    // gitleaks openai-api-key (any sk- key of the format; see the entropy floor in `scan`).
    p("openai-key", "sk-proj-", UrlSafe, 32, 400),
    p("openai-key", "sk-svcacct-", UrlSafe, 32, 400),
    p("openai-key", "sk-admin-", UrlSafe, 32, 400),
    p("openai-key", "sk-None-", UrlSafe, 32, 400),
    p("openai-key", "sk-or-v1-", Hex, 64, 64),
    p("openai-key", "sk-", UrlSafe, 32, 400),
    // gitleaks gcp-api-key; Google OAuth client secrets, access and refresh tokens.
    p("google-api-key", "AIza", UrlSafe, 33, 40),
    p("google-oauth", "GOCSPX-", UrlSafe, 24, 40),
    p("google-oauth", "ya29.", Dotted, 20, OPEN),
    p("google-oauth", "1//0", UrlSafe, 30, OPEN),
    // gitleaks npm-access-token, pypi-upload-token, rubygems-api-token, nuget (oy2), clojars-api-token.
    p("npm-token", "npm_", Alnum, 36, 36),
    p("pypi-token", "pypi-AgEIcHlwaS5vcmc", UrlSafe, 30, OPEN),
    p("pypi-token", "pypi-AgENdGVzdC5weXBpLm9yZw", UrlSafe, 30, OPEN),
    p("rubygems-token", "rubygems_", Hex, 48, 48),
    p("nuget-key", "oy2", LowerDigits, 43, 43),
    p("clojars-token", "CLOJARS_", Alnum, 60, 60),
    // gitleaks huggingface-access-token, huggingface-organization-api-token.
    p("huggingface-token", "hf_", Letters, 30, 40),
    p("huggingface-token", "api_org_", Letters, 30, 40),
    // gitleaks sendgrid-api-token (SG. 22 . 43).
    p("sendgrid-key", "SG.", Dotted, 60, 70),
    // gitleaks discord-* (webhooks); the bot token's shape is in `scan`.
    p("discord-webhook", "discord.com/api/webhooks/", Path, 40, 200),
    p("discord-webhook", "discordapp.com/api/webhooks/", Path, 40, 200),
    // gitleaks twilio-api-key; Twilio's account SID (AC…), paired with the auth token.
    p("twilio-key", "SK", Hex, 32, 32),
    p("twilio-key", "AC", Hex, 32, 32),
    // gitleaks mailgun-private-api-token, mailgun-signing-key.
    p("mailgun-key", "key-", Hex, 32, 32),
    // gitleaks shopify-*.
    p("shopify-token", "shpat_", Hex, 32, 32),
    p("shopify-token", "shpca_", Hex, 32, 32),
    p("shopify-token", "shppa_", Hex, 32, 32),
    p("shopify-token", "shpss_", Hex, 32, 32),
    // gitleaks digitalocean-*.
    p("digitalocean-token", "dop_v1_", Hex, 64, 64),
    p("digitalocean-token", "doo_v1_", Hex, 64, 64),
    p("digitalocean-token", "dor_v1_", Hex, 64, 64),
    // gitleaks heroku-api-key-v2.
    p("heroku-key", "HRKU-", UrlSafe, 40, 80),
    // gitleaks new-relic-*.
    p("newrelic-key", "NRAK-", UpperDigits, 27, 27),
    p("newrelic-key", "NRII-", UrlSafe, 32, 32),
    p("newrelic-key", "NRJS-", Hex, 19, 19),
    p("newrelic-key", "NRAA-", Hex, 27, 27),
    // gitleaks sentry-org-token, sentry-user-token.
    p("sentry-token", "sntrys_", Base64, 40, OPEN),
    p("sentry-token", "sntryu_", Hex, 64, 64),
    // gitleaks doppler-api-token (dp.pt.) and Doppler's other token types.
    p("doppler-token", "dp.pt.", Alnum, 40, 44),
    p("doppler-token", "dp.st.", Dotted, 40, 100),
    p("doppler-token", "dp.sa.", Alnum, 40, 44),
    p("doppler-token", "dp.ct.", Alnum, 40, 44),
    p("doppler-token", "dp.scim.", Alnum, 40, 44),
    p("doppler-token", "dp.audit.", Alnum, 40, 44),
    // gitleaks hashicorp-tf-* and vault-service-token, vault-batch-token.
    p("vault-token", "hvs.", UrlSafe, 24, OPEN),
    p("vault-token", "hvb.", UrlSafe, 24, OPEN),
    p("vault-token", "hvr.", UrlSafe, 24, OPEN),
    // gitleaks databricks-api-token.
    p("databricks-token", "dapi", HexDash, 32, 36),
    // gitleaks linear-api-key, linear-client-secret (keyword-anchored there; lin_oauth_ here).
    p("linear-key", "lin_api_", Alnum, 40, 40),
    p("linear-key", "lin_oauth_", Hex, 64, 64),
    // gitleaks notion-api-token (ntn_); Notion's older internal integration secrets.
    p("notion-token", "ntn_", Alnum, 40, 50),
    p("notion-token", "secret_", Alnum, 43, 43),
    // gitleaks atlassian-api-token (ATATT3…).
    p("atlassian-token", "ATATT3", Base64, 100, OPEN),
    p("atlassian-token", "ATCTT3", Base64, 100, OPEN),
    // gitleaks cloudflare-origin-ca-key.
    p("cloudflare-key", "v1.0-", HexDash, 150, 180),
    // gitleaks square-access-token, square-secret; facebook-access-token (EAA…).
    p("square-token", "sq0atp-", UrlSafe, 22, 60),
    p("square-token", "sq0csp-", UrlSafe, 40, 60),
    p("square-token", "EAAA", UrlSafe, 60, 100),
    p("facebook-token", "EAACEdEose0cBA", Alnum, 20, OPEN),
    p("facebook-token", "EAA", Alnum, 100, OPEN),
    // gitleaks planetscale-*.
    p("planetscale-token", "pscale_tkn_", Dotted, 32, 64),
    p("planetscale-token", "pscale_pw_", Dotted, 32, 64),
    p("planetscale-token", "pscale_oauth_", Dotted, 32, 64),
    // Supabase's personal access tokens and secret keys.
    p("supabase-key", "sbp_", Hex, 40, 40),
    p("supabase-key", "sb_secret_", UrlSafe, 20, 80),
    // gitleaks postman-api-token.
    p("postman-key", "PMAK-", HexDash, 59, 59),
    // gitleaks grafana-api-key (eyJrIjoi…), grafana-cloud-api-token, grafana-service-account-token.
    p("grafana-token", "glsa_", UrlSafe, 40, 41),
    p("grafana-token", "glc_", Base64, 32, 400),
    p("grafana-token", "eyJrIjoi", Base64, 50, 100),
    // gitleaks pulumi-api-token.
    p("pulumi-token", "pul-", Hex, 40, 40),
    // gitleaks age-secret-key.
    p("age-secret-key", "AGE-SECRET-KEY-1", UpperDigits, 58, 58),
    // Docker Hub personal access tokens; crates.io tokens (cio…); a 1Password account's secret key (A3-…).
    p("docker-token", "dckr_pat_", UrlSafe, 20, 64),
    p("docker-token", "dckr_oat_", UrlSafe, 20, 64),
    p("crates-token", "cio", Alnum, 32, 32),
    p("1password-secret-key", "A3-", UpperDash, 30, 40),
    // Any other PEM block in base64 (a kubeconfig's certificates): not a secret, but it shares the
    // first 12 characters of every key's, and is nothing a judge reads.
    p("certificate", "LS0tLS1CRUdJTi", Base64, 20, OPEN),
    // A JWT in base64 (a Kubernetes secret's `data:`): `eyJhbGciOi` encoded.
    p("jwt", "ZXlKaGJHY2lPaU", Base64, 30, OPEN),
    // gitleaks jwt: a header (`eyJ`), a payload and a signature; the whole token, any length.
    p("jwt", "eyJ", Dotted, 30, OPEN),
    // A PEM private key in base64 (kubeconfig `client-key-data`): the base64 of each `-----BEGIN … PRIVATE KEY`.
    p("private-key", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVk", Base64, 20, OPEN),
    p("private-key", "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS", Base64, 20, OPEN),
    p("private-key", "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS", Base64, 20, OPEN),
    p("private-key", "LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZ", Base64, 20, OPEN),
    p("private-key", "LS0tLS1CRUdJTiBEU0EgUFJJVkFURSBLRVk", Base64, 20, OPEN),
    p("private-key", "LS0tLS1CRUdJTiBFTkNSWVBURUQgUFJJVkFURSBLRVk", Base64, 20, OPEN),
    p("private-key", "LS0tLS1CRUdJTiBQR1AgUFJJVkFURSBLRVkgQkxPQ0s", Base64, 20, OPEN),
    // gitleaks: alibaba-access-key-id, dynatrace-api-token, easypost-*, flutterwave-*, frameio-api-token,
    // duffel-api-token, dropbox-*, shippo-api-token, typeform-api-token, readme-api-token,
    // prefect-api-token, scalingo-api-token, sendinblue-api-token, sourcegraph-access-token,
    // sonar-api-token, infracost-api-token, openshift-user-token, octopus-deploy-api-key,
    // settlemint-*, 1password-service-account-token, fly.io (fo1_, fm1/fm2), jfrog (AKCp),
    // twitter-bearer-token, yandex-*, airtable-personal-access-token, plaid-*, adobe-client-secret,
    // defined-networking-api-token, harness-api-key, authress-service-client-access-key,
    // perplexity-api-key, groq (gsk_), xai (xai-), replicate (r8_), render (rnd_), netlify (nfp_),
    // buildkite (bkua_), circleci (CCIPAT_), mapbox (sk.eyJ).
    p("alibaba-key", "LTAI", Alnum, 20, 24),
    p("dynatrace-token", "dt0c01.", Dotted, 80, 100),
    p("easypost-key", "EZAK", Alnum, 54, 54),
    p("easypost-key", "EZTK", Alnum, 54, 54),
    p("flutterwave-key", "FLWSECK_TEST-", HexDash, 32, 40),
    p("flutterwave-key", "FLWSECK-", HexDash, 32, 40),
    p("frameio-token", "fio-u-", UrlSafe, 64, 64),
    p("duffel-token", "duffel_test_", UrlSafe, 43, 43),
    p("duffel-token", "duffel_live_", UrlSafe, 43, 43),
    p("dropbox-token", "sl.", UrlSafe, 130, 200),
    p("shippo-token", "shippo_live_", Hex, 40, 40),
    p("shippo-token", "shippo_test_", Hex, 40, 40),
    p("typeform-token", "tfp_", Dotted, 59, 59),
    p("readme-key", "rdme_", LowerDigits, 70, 70),
    p("prefect-key", "pnu_", Alnum, 36, 36),
    p("scalingo-token", "tk-us-", UrlSafe, 48, 48),
    p("brevo-key", "xkeysib-", UrlSafe, 64, 90),
    p("brevo-key", "xsmtpsib-", UrlSafe, 64, 90),
    p("sourcegraph-token", "sgp_local_", Hex, 40, 40),
    p("sourcegraph-token", "sgp_", UrlSafe, 40, 60),
    p("sonar-token", "squ_", Hex, 40, 40),
    p("sonar-token", "sqp_", Hex, 40, 40),
    p("sonar-token", "sqa_", Hex, 40, 40),
    p("infracost-key", "ico-", Alnum, 32, 32),
    p("openshift-token", "sha256~", UrlSafe, 43, 43),
    p("octopus-key", "API-", UpperDigits, 26, 32),
    p("settlemint-token", "sm_pat_", Alnum, 16, 16),
    p("settlemint-token", "sm_aat_", Alnum, 16, 16),
    p("settlemint-token", "sm_sat_", Alnum, 16, 16),
    p("1password-token", "ops_eyJ", Base64, 200, OPEN),
    p("flyio-token", "fo1_", UrlSafe, 43, 43),
    p("flyio-token", "fm1r_", Base64, 100, OPEN),
    p("flyio-token", "fm1a_", Base64, 100, OPEN),
    p("flyio-token", "fm2_", Base64, 100, OPEN),
    p("jfrog-key", "AKCp", Alnum, 69, 69),
    p("jfrog-key", "cmVmdGtu", Alnum, 56, 56),
    p("twitter-token", "AAAAAAAAAAAAAAAAAAAAA", Base64, 40, OPEN),
    p("yandex-key", "AQVN", UrlSafe, 35, 38),
    p("yandex-key", "YC", UrlSafe, 38, 38),
    p("airtable-token", "pat", Dotted, 70, 90),
    p("plaid-token", "access-sandbox-", HexDash, 36, 36),
    p("plaid-token", "access-development-", HexDash, 36, 36),
    p("plaid-token", "access-production-", HexDash, 36, 36),
    p("adobe-secret", "p8e-", UrlSafe, 32, 32),
    p("defined-networking-key", "dnkey-", UrlSafe, 50, 80),
    p("harness-key", "pat.", Dotted, 60, 80),
    p("harness-key", "sat.", Dotted, 60, 80),
    p("perplexity-key", "pplx-", Alnum, 40, 60),
    p("groq-key", "gsk_", Alnum, 48, 56),
    p("xai-key", "xai-", Alnum, 60, 100),
    p("replicate-token", "r8_", Alnum, 30, 40),
    p("render-key", "rnd_", Alnum, 28, 40),
    p("netlify-token", "nfp_", Alnum, 36, 40),
    p("buildkite-token", "bkua_", Hex, 40, 40),
    p("circleci-token", "CCIPAT_", Dotted, 40, 80),
    p("mapbox-token", "sk.eyJ", Dotted, 60, OPEN),
];
