//! Files and commands whose outputs are secrets (issues 18 and 25): never
//! sent to the judge, whatever they hold.
//!
//! For: telling, from a tool call's arguments, whether it reads such a file
//! (`secretFiles`, default [`DEFAULT_SECRET_FILES`]) or runs a command that
//! prints the environment or a credential ([`SECRET_COMMANDS`]). Not for:
//! secrets inside other outputs (`scan`).

/// The default `secretFiles`, each with where the convention comes from (in
/// a comment: the list ships in the `.wasm`, the sources need not). A
/// pattern without `/` matches a file's name; one with `/` the end of its
/// path (`.kube/config`, not every `config`). `*` and `?` only.
pub const DEFAULT_SECRET_FILES: &[&str] = &[
    ".env",                                 // dotenv
    ".env.*",                               // dotenv (per environment)
    "*.env",                                // dotenv, docker compose env_file
    ".envrc",                               // direnv
    "*.pem",                                // PEM keys and certificates (RFC 7468)
    "*.key",                                // private keys (OpenSSL, nginx)
    "*.p12",                                // PKCS #12 stores
    "*.pfx",                                // PKCS #12 stores (Windows)
    "*.p8",                                 // PKCS #8 keys (Apple push, App Store Connect)
    "*.ppk",                                // PuTTY private keys
    "*.keystore",                           // Java and Android keystores
    "*.jks",                                // Java keystores
    "*.kdbx",                               // KeePass databases
    "id_rsa",                               // OpenSSH
    "id_dsa",                               // OpenSSH
    "id_ecdsa",                             // OpenSSH
    "id_ed25519",                           // OpenSSH
    "id_*_sk",                              // OpenSSH security keys
    ".npmrc",                               // npm (_authToken)
    ".pypirc",                              // PyPI, twine
    ".netrc",                               // curl, git, ftp
    "_netrc",                               // curl, git on Windows
    ".pgpass",                              // PostgreSQL
    ".my.cnf",                              // MySQL client
    ".git-credentials",                     // git credential-store
    ".gitcookies",                          // git http.cookiefile (Gerrit)
    "credentials",                          // AWS (~/.aws/credentials), cargo, gem
    "credentials.*",                        // cargo (credentials.toml), Rails (credentials.yml.enc)
    ".kube/config",                         // kubectl
    "kubeconfig",                           // kubectl
    "*.kubeconfig",                         // kubectl
    ".docker/config.json",                  // docker login
    ".dockercfg",                           // docker (old format)
    "application_default_credentials.json", // gcloud auth application-default login
    "*service-account*.json",               // Google Cloud service account keys
    "*.tfstate",                            // Terraform state
    "*.tfstate.backup",                     // Terraform state
    "*.tfvars",                             // Terraform variables
    "*.tfvars.json",                        // Terraform variables
    "gh/hosts.yml",                         // GitHub CLI
    ".config/hub",                          // hub
    ".vault-token",                         // HashiCorp Vault CLI
    "huggingface/token",                    // Hugging Face hub
    "auth.json",                            // Composer, Docker Desktop
    ".boto",                                // gsutil, boto
    ".s3cfg",                               // s3cmd
    "accessTokens.json",                    // Azure CLI
    "msal_token_cache.json",                // Azure CLI
    ".htpasswd",                            // Apache
    "/etc/shadow",                          // Unix password hashes
    "secrets.yml",                          // Rails, Ansible
    "secrets.yaml",                         // Helm secrets, Ansible
    ".bash_history",                        // shell history (commands with tokens)
    ".zsh_history",                         // shell history
];

/// The default `secretFiles` (issues 18 and 25): a pattern without `/`
/// matches a file's name, one with `/` the end of its path. Where each
/// convention comes from is in [`DEFAULT_SECRET_FILES`].
pub fn default_secret_files() -> Vec<String> {
    DEFAULT_SECRET_FILES.iter().map(|p| p.to_string()).collect()
}

/// Commands that print secrets whatever the file, each as words a command
/// must start with (after `sudo` and `VAR=…` assignments) and, where the
/// start is not enough, a word it must also hold.
pub const SECRET_COMMANDS: &[(&str, &str)] = &[
    ("printenv", ""),
    ("env", ""),
    ("export -p", ""),
    ("declare -x", ""),
    ("declare -p", ""),
    ("set", ""),
    ("kubectl config view", "--raw"),
    ("kubectl get secret", ""),
    ("kubectl get secrets", ""),
    ("gcloud auth print-access-token", ""),
    ("gcloud auth print-identity-token", ""),
    ("gcloud auth application-default print-access-token", ""),
    ("gcloud secrets versions access", ""),
    ("gh auth token", ""),
    ("gh auth status", "--show-token"),
    ("heroku auth:token", ""),
    ("heroku config", ""),
    ("aws configure export-credentials", ""),
    ("aws configure get", "secret"),
    ("aws sts get-session-token", ""),
    ("aws sts assume-role", ""),
    ("aws secretsmanager get-secret-value", ""),
    ("aws ssm get-parameter", "--with-decryption"),
    ("aws ssm get-parameters", "--with-decryption"),
    ("aws ecr get-login-password", ""),
    ("az account get-access-token", ""),
    ("vault kv get", ""),
    ("vault read", ""),
    ("vault token create", ""),
    ("vault print token", ""),
    ("op read", ""),
    ("op item get", "--reveal"),
    ("security find-generic-password", "-w"),
    ("security find-internet-password", "-w"),
    ("doppler secrets", ""),
    ("pass show", ""),
    ("bw get password", ""),
    ("git credential fill", ""),
    ("npm token list", ""),
    ("docker inspect", ""),
];

/// Whether a tool call reads a file that is a secret (`secretFiles`) or runs
/// a command that prints secrets: a `read` (or any tool) whose `path`-like
/// argument names one, or a shell command with one as a word or one of
/// [`SECRET_COMMANDS`] as a command. Returns the file's name or the command.
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
    if let Some(c) = secret_command(command) {
        return Some(c);
    }
    command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')'))
        .map(|w| w.trim_matches(|c| matches!(c, '"' | '\'' | '`')))
        .find_map(|w| secret_name(w, patterns))
}

/// The first command of `command` (split at `;`, `&`, `|`, newlines, `$(`)
/// that prints secrets, as its words.
pub fn secret_command(command: &str) -> Option<String> {
    for part in command.split([';', '&', '|', '\n', '(', '`']) {
        let mut words: Vec<&str> = part.split_whitespace().collect();
        // `sudo`, `exec`, `command` and `VAR=value` before the command.
        while let Some(w) = words.first() {
            if matches!(*w, "sudo" | "exec" | "command" | "time" | "nohup") || (w.contains('=') && !w.starts_with('-'))
            {
                words.remove(0);
            } else {
                break;
            }
        }
        let Some(first) = words.first() else { continue };
        let first = first.rsplit('/').next().unwrap_or(first);
        for (start, also) in SECRET_COMMANDS {
            let want = start.split(' ').count();
            let same = start
                .split(' ')
                .zip(std::iter::once(first).chain(words[1..].iter().copied()))
                .filter(|(a, b)| a == b)
                .count();
            if same < want {
                continue;
            }
            // `env` and `set` print everything only alone (`env X=1 cmd` runs a command).
            if matches!(*start, "env" | "set") && words[1..].iter().any(|w| !w.starts_with('-')) {
                continue;
            }
            if also.is_empty() || words.iter().any(|w| w.contains(also)) {
                return Some(words.join(" "));
            }
        }
    }
    None
}

/// The file name of `path` when it matches one of `patterns` (by name, or
/// by the end of the path for a pattern with `/`).
fn secret_name(path: &str, patterns: &[String]) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if name.is_empty() {
        return None;
    }
    let full = path.replace('\\', "/");
    patterns
        .iter()
        .any(|p| {
            if p.contains('/') {
                // The pattern against the path's end after each `/`.
                let p = p.trim_start_matches('/').as_bytes();
                let full = full.as_bytes();
                (0..full.len()).filter(|&i| i == 0 || full[i - 1] == b'/').any(|i| glob(p, &full[i..]))
            } else {
                glob(p.as_bytes(), name.as_bytes())
            }
        })
        .then(|| name.to_string())
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
