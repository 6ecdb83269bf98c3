use super::*;

fn kinds(text: &str) -> Vec<(&'static str, String)> {
    Secrets::new(&[]).find(text).into_iter().map(|f| (f.kind, text[f.start..f.end].to_string())).collect()
}

fn one(text: &str, kind: &str, secret: &str) {
    assert_eq!(kinds(text), vec![(kind_static(kind), secret.to_string())], "in {text:?}");
}

fn kind_static(kind: &str) -> &'static str {
    Box::leak(kind.to_string().into_boxed_str())
}

#[test]
fn shapes_that_start_with_a_digit() {
    let mailchimp = "0e4f6a8b2c1d3e5f7a9b0c2d4e6f8a1b-us12";
    one(&format!("mailchimp says {mailchimp} is live"), "mailchimp-key", mailchimp);
    let azure = "7Xk8Q~d4fJ2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5U";
    one(&format!("client secret {azure} (expires 2027)"), "azure-secret", azure);
    let terraform = "0a1b2c3d4e5f6g.atlasv1.4fJ2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5Ua2Ig7Ko1Nm4PqAbCdEfGhIjKlMnOpQr";
    one(&format!("TFE {terraform}"), "terraform-token", terraform);
    // Numbers and dates of the same lengths are none of them.
    assert_eq!(kinds("build 20240501123456789012345678901234-us1 at 2024-05-01T12:00:00.000Z 1234Q~"), vec![]);
}

#[test]
fn provider_formats() {
    one("export AWS_ACCESS_KEY_ID=AKIA4HK2JQ7ZT5XW9P3L", "aws-access-key", "AKIA4HK2JQ7ZT5XW9P3L");
    one("token: ghp_4fJ2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5Ua2Ig", "github-token", "ghp_4fJ2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5Ua2Ig");
    one("GITLAB=glpat-x9K2mQ7vR4tY1wB8nD3s", "gitlab-token", "glpat-x9K2mQ7vR4tY1wB8nD3s");
    one(
        "SLACK_BOT_TOKEN=xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "slack-token",
        "xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    );
    one(
        "posting to https://hooks.slack.com/services/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 now",
        "slack-webhook",
        "hooks.slack.com/services/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",
    );
    one("stripe.api_key = 'sk_live_51Hx9K2mQ7vR4tY1wB8nD3sL6pZ'", "stripe-key", "sk_live_51Hx9K2mQ7vR4tY1wB8nD3sL6pZ");
    let openai = "sk-proj-4fJ2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5Ua2Ig7Ko1Nm4Pq";
    one(&format!("OPENAI_API_KEY={openai}"), "openai-key", openai);
    let anthropic = "sk-ant-api03-4fJ2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5Ua2Ig7Ko1Nm4Pq-AbCdEfGh_AA";
    one(&format!("\"apiKey\": \"{anthropic}\""), "anthropic-key", anthropic);
    one("key=AIzaSyD4fJ2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5U&q=x", "google-api-key", "AIzaSyD4fJ2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5U");
    one(
        "//registry.npmjs.org/:_authToken=npm_4fJ2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5Ua2Ig",
        "npm-token",
        "npm_4fJ2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5Ua2Ig",
    );
}

#[test]
fn jwt_in_an_authorization_header() {
    let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    one(&format!("Authorization: Bearer {jwt}"), "jwt", jwt);
    one("Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "authorization", "9f8e7d6c5b4a39281706f5e4d3c2b1a0");
    assert!(kinds("Authorization: Bearer ${TOKEN}").is_empty());
    assert!(kinds("use a bearer token to authenticate").is_empty());
}

#[test]
fn credentials_in_urls() {
    one("DATABASE_URL=postgres://app:S3cr3t-p4ss@db.internal:5432/app", "url-credentials", "S3cr3t-p4ss");
    one("remote: https://x-access-token:abc123DEF456@github.com/o/r.git", "url-credentials", "abc123DEF456");
    assert!(kinds("see https://user@example.com/x and https://example.com/a@b").is_empty());
    assert!(kinds("postgres://app:${DB_PASSWORD}@db/app").is_empty());
}

#[test]
fn private_keys_whole_or_cut() {
    let body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBkZXYga2V5IGZvciB0ZXN0cyBvbmx5LCBub3QgYSByZWFsIG9uZQAAAJg\n";
    let block = format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{body}-----END OPENSSH PRIVATE KEY-----");
    let text = format!("$ cat ~/.ssh/id_ed25519\n{block}\n$ ls\n");
    one(&text, "private-key", &block);
    // Cut off by a tool's limit: withheld to the end.
    let cut = format!("-----BEGIN RSA PRIVATE KEY-----\n{body}");
    one(&cut, "private-key", &cut);
    // JSON-escaped, as in a service account file.
    let json = format!(
        "{{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n\"}}",
        body.replace('\n', "\\n")
    );
    let found = kinds(&json);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].1.starts_with("-----BEGIN PRIVATE KEY-----") && found[0].1.ends_with("-----END PRIVATE KEY-----"));
    // A public key is not a secret.
    assert!(kinds(
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----"
    )
    .is_empty());
}

#[test]
fn generic_assignments_need_a_keyword_and_entropy() {
    one(
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9Q3x7Lk2",
        "aws-secret-key",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9Q3x7Lk2",
    );
    one("  \"client_secret\": \"8f3kQ9zL2mX7vB4nR1tY6wP0\",", "generic-secret", "8f3kQ9zL2mX7vB4nR1tY6wP0");
    one("DB_PASSWORD=hunter2!x", "password", "hunter2!x");
    one("export PGPASS=Tr0ub4dor&3", "password", "Tr0ub4dor&3");
    one("Noted; the database password is Tr0ub4dor&3-horse per the runbook.", "password", "Tr0ub4dor&3-horse");
    assert!(kinds("the password is correct, and the key is in the vault").is_empty());
    one("DATABASE_PASSWORD=supersecret", "password", "supersecret");
    one("Server=db;Password=abc123!;Database=app", "password", "abc123!");
    one("12:00 INFO login user=admin password=hunter2 ok", "password", "hunter2");
    assert!(kinds("  password: string;").is_empty());
    // Literals the generic pattern's characters stop short of, and a passphrase in quotes.
    one("SECRET_KEY=\"django-insecure-7x#k!p@2m$9qz&w\"", "generic-secret", "django-insecure-7x#k!p@2m$9qz&w");
    one("DJANGO_SECRET_KEY=django-insecure-7x#k!p@2m$9qz&w", "generic-secret", "django-insecure-7x#k!p@2m$9qz&w");
    one("  \"password\": \"correct horse battery staple 42\",", "password", "correct horse battery staple 42");
    assert!(kinds("  apiKey: process.env.ANTHROPIC_API_KEY_VALUE,").is_empty());
    // In a log line, unquoted: a random value is withheld, an expression is not.
    one("12:00:01 INFO deploy api_key=a8f9d7e6c5b4a3f2e1d0 user=bob", "generic-secret", "a8f9d7e6c5b4a3f2e1d0");
    one(
        "2026-11-30 INFO session started token=nzcqaxx439qurjjqoqkctarpm7ct24rn user=ci",
        "generic-secret",
        "nzcqaxx439qurjjqoqkctarpm7ct24rn",
    );
    assert!(kinds("let token=raw.token,expiresAt=raw.expires_at;x={isOAuthToken:isOAuthToken2}").is_empty());
    for minified in [
        "}}s.hooks=r}if(n.walkTokens){let r=this.defaults.walkTokens,i=n.walkTokens;s.walkTokens=f}",
        "{output:outputTokens,totalTokens:input+outputTokens+cacheRead+cacheWrite,cost:{input:1}}",
        "let[filter2=nonNullish,valueFn=pass,sourceKey=targetKey]=instruction;",
    ] {
        assert!(kinds(minified).is_empty(), "{minified}: {:?}", kinds(minified));
    }
    // Names in code, variables, low entropy, and words that only contain a keyword.
    for plain in [
        "const apiKey = options.apiKey;",
        "password: process.env.DB_PASSWORD,",
        "token = getToken()",
        "secret_key = ${SECRET_KEY}",
        "api_version = 2024-01-01",
        "Tests: 12 passed, 12 total",
        "PWD=/home/user/project",
        "max_tokens: 4096",
        "keyboard = aaaaaaaaaaaaaaaa",
    ] {
        assert!(kinds(plain).is_empty(), "{plain:?}: {:?}", kinds(plain));
    }
}

#[test]
fn user_patterns_and_merging() {
    let s = Secrets::new(&["acme_[a-z0-9]{12}".to_string()]);
    let text = "ACME=acme_abcdef123456 and AKIA4HK2JQ7ZT5XW9P3L";
    let found = s.find(text);
    assert_eq!(found.iter().map(|f| f.kind).collect::<Vec<_>>(), ["custom", "aws-access-key"]);
    assert_eq!(redacted(text, &found), "ACME=[secret: custom] and [secret: aws-access-key]");
    assert!(compile_secret_pattern("(?=x)").is_err());
    assert!(compile_secret_pattern("").is_err());
}

#[test]
fn emoji_cjk_and_huge_lines_at_every_boundary() {
    let key = "AKIA4HK2JQ7ZT5XW9P3L";
    for text in
        [format!("日本語{key}😀"), format!("😀 password=密码密码密码密码 {key}"), format!("{}{key}", "é".repeat(300))]
    {
        let found = Secrets::new(&[]).find(&text);
        assert!(found.iter().any(|f| &text[f.start..f.end] == key), "{text}");
        let out = redacted(&text, &found);
        assert!(!out.contains(key));
    }
    // A megabyte of assignments on one line stays linear (a bounded look per candidate).
    let line: String = (0..40_000).map(|i| format!("\"k{i}\":\"v{i}\",")).collect();
    assert!(Secrets::new(&[]).find(&line).is_empty());
}

#[test]
fn entropy_as_gitleaks_counts_it() {
    assert_eq!(entropy(""), 0.0);
    assert_eq!(entropy("aaaa"), 0.0);
    assert!((entropy("abcd") - 2.0).abs() < 1e-12);
    assert!((entropy("aabb") - 1.0).abs() < 1e-12);
}

#[test]
fn secret_files_by_name() {
    let files = files::default_secret_files();
    let read = |p: &str| secret_file(&serde_json::json!({ "path": p }), &files);
    assert_eq!(read("/repo/.env").as_deref(), Some(".env"));
    assert_eq!(read(".env.production").as_deref(), Some(".env.production"));
    assert_eq!(read("certs/server.KEY").as_deref(), Some("server.KEY"));
    assert_eq!(read("/home/u/.ssh/id_ed25519").as_deref(), Some("id_ed25519"));
    assert_eq!(read("src/environment.ts"), None);
    assert_eq!(read("id_ed25519.pub"), None);
    let bash = |c: &str| secret_file(&serde_json::json!({ "command": c }), &files);
    assert_eq!(bash("cat .env && echo done").as_deref(), Some(".env"));
    assert_eq!(bash("head -n 20 '/app/config/credentials.json'").as_deref(), Some("credentials.json"));
    assert_eq!(bash("cat ~/.aws/credentials").as_deref(), Some("credentials"));
    assert_eq!(bash("npm test 2>&1"), None);
    assert_eq!(secret_file(&serde_json::Value::Null, &files), None);
}

#[test]
fn secret_files_by_path_and_commands() {
    let files = files::default_secret_files();
    assert!(files.len() >= 40, "{}", files.len());
    let read = |p: &str| secret_file(&serde_json::json!({ "path": p }), &files);
    for p in [
        "/home/u/.kube/config",
        "/home/u/.docker/config.json",
        "/home/u/.git-credentials",
        ".envrc",
        "/home/u/.config/gcloud/application_default_credentials.json",
        "infra/terraform.tfstate",
        "prod.tfvars",
        "/home/u/.config/gh/hosts.yml",
        "/home/u/.vault-token",
        "/home/u/.pypirc",
        "/home/u/.cache/huggingface/token",
    ] {
        assert!(read(p).is_some(), "{p}");
    }
    for p in ["src/config.ts", "config", "app/config.json", "tokenizer.json", "docs/hosts.yml"] {
        assert_eq!(read(p), None, "{p}");
    }
    let bash = |c: &str| secret_file(&serde_json::json!({ "command": c }), &files);
    for c in [
        "printenv",
        "env | sort",
        "sudo env",
        "kubectl config view --raw",
        "gcloud auth print-access-token",
        "cat ~/.aws/credentials",
        "gh auth token",
        "echo ok && aws configure export-credentials --format env",
        "FOO=1 vault kv get secret/app",
    ] {
        assert!(bash(c).is_some(), "{c}");
    }
    for c in ["env NODE_ENV=test npm test", "kubectl config view", "npm test", "echo set", "grep -rn env src"] {
        assert_eq!(bash(c), None, "{c}");
    }
}
