// Outside secret corpus: tool outputs with planted secrets, built only from public
// facts (gitleaks' default rules, TruffleHog detectors, provider docs, file formats).
// It does not read or import anything from this repository. See README.md.

export interface Planted { kind: string; value: string; surrounding: string; source: string; appearsAs?: string[]; output?: number }
export interface Corpus { outputs: { surrounding: string; text: string; label: string }[]; planted: Planted[] }

export const SEEN_SEEDS: number[] = [1, 2, 3, 4];
export const UNSEEN_SEED: number = 977;

// ---------------------------------------------------------------- random
export interface Rng {
  f(): number; int(lo: number, hi: number): number; pick<T>(xs: readonly T[]): T;
  s(alpha: string, n: number): string; chance(p: number): boolean; shuffle<T>(xs: T[]): T[]; bytes(n: number): Uint8Array;
}
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const f = (): number => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number): number => lo + Math.floor(f() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(f() * xs.length)] as T;
  const s = (alpha: string, n: number): string => {
    for (;;) {
      let out = '';
      for (let i = 0; i < n; i++) out += alpha[Math.floor(f() * alpha.length)];
      if (n < 2 || new Set(out).size > 1) return out;
    }
  };
  const shuffle = <T>(xs: T[]): T[] => {
    for (let i = xs.length - 1; i > 0; i--) { const j = Math.floor(f() * (i + 1)); const t = xs[i] as T; xs[i] = xs[j] as T; xs[j] = t; }
    return xs;
  };
  const bytes = (n: number): Uint8Array => { const b = new Uint8Array(n); for (let i = 0; i < n; i++) b[i] = Math.floor(f() * 256); return b; };
  return { f, int, pick, s, chance: (p: number): boolean => f() < p, shuffle, bytes };
}

export const U = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const L = 'abcdefghijklmnopqrstuvwxyz';
export const D = '0123456789';
export const HEX = '0123456789abcdef';
export const AN = U + L + D;
const UD = U + D;
const B64 = AN + '+/';
const W = AN + '_-';
const B32 = U + '234567';
const BECH = 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L';
export const b64 = (x: string | Uint8Array): string => Buffer.from(x).toString('base64');
export const b64url = (x: string | Uint8Array): string => Buffer.from(x).toString('base64url');
export const uuid = (r: Rng): string => `${r.s(HEX, 8)}-${r.s(HEX, 4)}-4${r.s(HEX, 3)}-${r.pick(['8', '9', 'a', 'b'])}${r.s(HEX, 3)}-${r.s(HEX, 12)}`;
const digits = (r: Rng, n: number): string => String(r.int(1, 9)) + r.s(D, n - 1);
export const WORDS = ['orders', 'billing', 'ledger', 'search', 'gateway', 'reports', 'inventory', 'notifier', 'catalog', 'media', 'checkout', 'metrics', 'shipping', 'accounts', 'payments'];
const host = (r: Rng): string => `${r.pick(WORDS)}-${r.pick(['prod', 'staging', 'dev', 'eu1', 'us2'])}.${r.pick(['internal', 'svc.cluster.local', 'example.net', 'corp.lan'])}`;
export const iso = (r: Rng): string => new Date(Date.UTC(2024, r.int(0, 11), r.int(1, 28), r.int(0, 23), r.int(0, 59), r.int(0, 59), r.int(0, 999))).toISOString();
const ip = (r: Rng): string => `10.${r.int(0, 255)}.${r.int(0, 255)}.${r.int(1, 254)}`;
const USERS = ['app', 'deploy', 'svc_orders', 'admin', 'ci-bot', 'analytics', 'readonly', 'dev'];

// ---------------------------------------------------------------- private keys
const PEM_SPECS: Record<string, { label: string; start: string; len: number; width: number }> = {
  'private-key-rsa': { label: 'RSA PRIVATE KEY', start: 'MIIEpAIBAAKCAQEA', len: 1592, width: 64 },
  'private-key-ec': { label: 'EC PRIVATE KEY', start: 'MHcCAQEEI', len: 164, width: 64 },
  'private-key-openssh': { label: 'OPENSSH PRIVATE KEY', start: 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW', len: 400, width: 70 },
  'private-key-pkcs8': { label: 'PRIVATE KEY', start: 'MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ', len: 1624, width: 64 },
  'private-key-pgp': { label: 'PGP PRIVATE KEY BLOCK', start: 'lQVYBG', len: 1320, width: 64 },
};
function wrapLines(s: string, w: number): string[] { const out: string[] = []; for (let i = 0; i < s.length; i += w) out.push(s.slice(i, i + w)); return out; }
function pemBody(r: Rng, kind: string): string {
  const p = PEM_SPECS[kind] ?? (PEM_SPECS['private-key-rsa'] as { label: string; start: string; len: number; width: number });
  const n = p.len + 4 * r.int(-2, 2);
  let body = p.start + r.s(B64, n - p.start.length);
  if (r.chance(0.4)) body = body.slice(0, -1) + '=';
  const lines = wrapLines(body, p.width);
  if (kind === 'private-key-pgp') lines.push('=' + r.s(B64, 4));
  return lines.join('\n');
}
export function pemLabel(kind: string): string { return (PEM_SPECS[kind] ?? { label: 'PRIVATE KEY' }).label; }
function fullPem(kind: string, body: string): string {
  const l = pemLabel(kind);
  return `-----BEGIN ${l}-----\n${kind === 'private-key-pgp' ? '\n' : ''}${body}\n-----END ${l}-----\n`;
}

// ---------------------------------------------------------------- JWT
function jwt(r: Rng, long: boolean): string {
  const alg = r.pick(['HS256', 'RS256', 'ES256', 'RS256']);
  const head: Record<string, string> = { alg, typ: 'JWT' };
  if (alg !== 'HS256') head['kid'] = r.s(W, 27);
  const now = 1700000000 + r.int(0, 50000000);
  const body: Record<string, unknown> = { iss: `https://${r.pick(['auth', 'login', 'sso'])}.${r.pick(WORDS)}.example.net/`, sub: uuid(r), aud: r.pick(['api', 'https://api.example.net', 'account']), iat: now, exp: now + r.pick([300, 3600, 86400]), jti: uuid(r) };
  if (long) {
    body['scope'] = WORDS.map((w) => `${w}:read ${w}:write`).join(' ');
    body['roles'] = ['admin', 'billing-manager', 'support', 'developer', 'auditor'].slice(0, r.int(2, 5));
    body['https://hasura.io/jwt/claims'] = { 'x-hasura-allowed-roles': ['user', 'editor', 'manager'], 'x-hasura-default-role': 'user', 'x-hasura-user-id': uuid(r), 'x-hasura-org-id': uuid(r) };
    body['permissions'] = [] as string[];
    const target = r.int(900, 1500);
    while (JSON.stringify(body).length < target) (body['permissions'] as string[]).push(`${r.pick(['read', 'write', 'delete', 'admin'])}:${r.pick(WORDS)}:${r.s(L, 4)}`);
    body['email'] = `${r.pick(USERS)}@example.net`;
  } else if (r.chance(0.5)) body['role'] = r.pick(['service_role', 'authenticated', 'anon']);
  const sig = alg === 'HS256' ? 43 : alg === 'ES256' ? 86 : 342;
  return `${b64url(JSON.stringify(head))}.${b64url(JSON.stringify(body))}.${r.s(W, sig)}`;
}

// ---------------------------------------------------------------- kinds
export type Shape = 'line' | 'pem' | 'kcfg' | 'docker' | 'gsa';
interface Spec {
  kind: string; source: string; names: string[]; gen: (r: Rng) => string; shape?: Shape;
  header?: string; user?: string; query?: string; js?: string; py?: string; cli?: string;
  wrap?: (r: Rng, v: string) => { text: string; pieces?: string[] };
}
export interface Item {
  kind: string; value: string; source: string; name: string; ascii: string; shape: Shape; display: string; pieces?: string[];
  plain: boolean; header?: string; user?: string; query?: string; js?: string; py?: string; cli?: string;
}
const GL = 'gitleaks rule ';
const TH = 'TruffleHog detector ';
const BEARER = 'Authorization: Bearer {}';
const GEN_ALPHAS = [AN, AN + '!#$%^*@-_.+=', L + D, W, AN + '!@#$%^*', HEX, AN + '%$^*!#@', U + D + '#$!'];
export const genericValue = (r: Rng): string => r.s(r.pick(GEN_ALPHAS), r.int(10, 64));
const enc = (v: string): { text: string; pieces?: string[] } => { const e = encodeURIComponent(v); return e === v ? { text: v } : { text: e, pieces: [e] }; };

const SPECS: Spec[] = [
  // AWS
  { kind: 'aws-access-key-id', source: GL + 'aws-access-token (AKIA/ASIA + 16 base32)', names: ['AWS_ACCESS_KEY_ID', 'S3_ACCESS_KEY'], gen: (r) => r.pick(['AKIA', 'AKIA', 'ASIA']) + r.s(B32, 16), cli: 'aws configure set aws_access_key_id {} --profile prod' },
  { kind: 'aws-secret-key', source: 'AWS IAM docs (40-char secret access key); ' + TH + 'aws', names: ['AWS_SECRET_ACCESS_KEY', 'S3_SECRET_KEY', 'aws_secret_key'], gen: (r) => r.s(B64, 40), cli: 'aws configure set aws_secret_access_key {} --profile prod', py: 's3 = boto3.client("s3", aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"], aws_secret_access_key="{}")' },
  { kind: 'aws-session-token', source: 'AWS STS docs (SessionToken, IQoJb3JpZ2luX2Vj… base64)', names: ['AWS_SESSION_TOKEN'], gen: (r) => 'IQoJb3JpZ2luX2Vj' + r.s(B64, r.int(280, 520)) },
  // GitHub
  { kind: 'github-pat', source: GL + 'github-pat; GitHub docs "About authentication" token prefixes', names: ['GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_PAT'], gen: (r) => 'ghp_' + r.s(AN, 36), header: 'Authorization: token {}', js: "const octokit = new Octokit({ auth: '{}' });", py: 'gh = Github(auth=Auth.Token("{}"))', cli: 'docker login ghcr.io -u octodev -p {}' },
  { kind: 'github-fine-grained-pat', source: GL + 'github-fine-grained-pat', names: ['GITHUB_TOKEN', 'GH_PAT', 'RENOVATE_TOKEN'], gen: (r) => 'github_pat_' + r.s(AN, 22) + '_' + r.s(AN, 59), header: BEARER },
  { kind: 'github-oauth-token', source: GL + 'github-oauth', names: ['GH_OAUTH_TOKEN', 'oauth_token'], gen: (r) => 'gho_' + r.s(AN, 36), header: BEARER },
  { kind: 'github-app-installation-token', source: GL + 'github-app-token (ghs_)', names: ['GITHUB_APP_TOKEN', 'INSTALLATION_TOKEN'], gen: (r) => 'ghs_' + r.s(AN, 36), header: BEARER },
  { kind: 'github-user-to-server-token', source: GL + 'github-app-token (ghu_)', names: ['GH_USER_TOKEN'], gen: (r) => 'ghu_' + r.s(AN, 36), header: BEARER },
  { kind: 'github-refresh-token', source: GL + 'github-refresh-token', names: ['GITHUB_REFRESH_TOKEN', 'refresh_token'], gen: (r) => 'ghr_' + r.s(AN, 36) },
  // GitLab
  { kind: 'gitlab-pat', source: GL + 'gitlab-pat', names: ['GITLAB_TOKEN', 'CI_API_TOKEN', 'GL_TOKEN'], gen: (r) => 'glpat-' + r.s(W, 20), header: 'PRIVATE-TOKEN: {}', cli: 'glab auth login --hostname gitlab.com --token {}' },
  { kind: 'gitlab-deploy-token', source: GL + 'gitlab-deploy-token', names: ['GITLAB_DEPLOY_TOKEN'], gen: (r) => 'gldt-' + r.s(W, 20) },
  { kind: 'gitlab-runner-token', source: GL + 'gitlab-runner-authentication-token', names: ['RUNNER_TOKEN', 'CI_SERVER_TOKEN'], gen: (r) => 'glrt-' + r.s(W, 20), cli: 'gitlab-runner register --non-interactive --url https://gitlab.com --token {}' },
  { kind: 'gitlab-trigger-token', source: GL + 'gitlab-ptt', names: ['TRIGGER_TOKEN'], gen: (r) => 'glptt-' + r.s(HEX, 40) },
  { kind: 'gitlab-runner-registration-token', source: GL + 'gitlab-rrt', names: ['REGISTRATION_TOKEN'], gen: (r) => 'GR1348941' + r.s(W, 20) },
  // Slack
  { kind: 'slack-bot-token', source: GL + 'slack-bot-token', names: ['SLACK_BOT_TOKEN', 'SLACK_TOKEN'], gen: (r) => `xoxb-${digits(r, r.int(10, 13))}-${digits(r, r.int(10, 13))}-${r.s(AN, 24)}`, header: BEARER, js: "const web = new WebClient('{}');", py: 'client = WebClient(token="{}")' },
  { kind: 'slack-user-token', source: GL + 'slack-user-token', names: ['SLACK_USER_TOKEN'], gen: (r) => `xoxp-${digits(r, 12)}-${digits(r, 12)}-${digits(r, 13)}-${r.s(HEX, 32)}`, header: BEARER },
  { kind: 'slack-app-token', source: GL + 'slack-app-token', names: ['SLACK_APP_TOKEN'], gen: (r) => `xapp-1-A${r.s(UD, 10)}-${digits(r, 13)}-${r.s(HEX, 64)}`, header: BEARER },
  { kind: 'slack-webhook', source: GL + 'slack-webhook-url (value = the secret last path segment)', names: ['SLACK_WEBHOOK_URL', 'ALERT_WEBHOOK'], gen: (r) => r.s(AN, 24), wrap: (r, v) => ({ text: `https://hooks.slack.com/services/T${r.s(UD, 8)}/B${r.s(UD, r.int(8, 10))}/${v}` }), cli: "curl -X POST -H 'Content-type: application/json' --data '{\"text\":\"deploy finished\"}' {}" },
  // payments / AI
  { kind: 'stripe-secret-key', source: GL + 'stripe-access-token', names: ['STRIPE_SECRET_KEY', 'STRIPE_API_KEY'], gen: (r) => 'sk_live_' + r.s(AN, r.pick([24, 99])), header: BEARER, user: 'VALUE:', js: "const stripe = new Stripe('{}', { apiVersion: '2024-06-20' });", py: 'stripe.api_key = "{}"' },
  { kind: 'stripe-restricted-key', source: GL + 'stripe-access-token (rk_)', names: ['STRIPE_RESTRICTED_KEY'], gen: (r) => 'rk_live_' + r.s(AN, r.pick([24, 99])), header: BEARER },
  { kind: 'openai-api-key', source: GL + 'openai-api-key (T3BlbkFJ marker)', names: ['OPENAI_API_KEY'], gen: (r) => r.chance(0.75) ? `sk-${r.pick(['proj', 'svcacct', 'admin'])}-${r.s(W, 74)}T3BlbkFJ${r.s(W, 74)}` : `sk-${r.s(AN, 20)}T3BlbkFJ${r.s(AN, 20)}`, header: BEARER, js: "const openai = new OpenAI({ apiKey: '{}' });", py: 'client = OpenAI(api_key="{}")', cli: 'OPENAI_API_KEY={} python scripts/eval.py' },
  { kind: 'anthropic-api-key', source: GL + 'anthropic-api-key', names: ['ANTHROPIC_API_KEY'], gen: (r) => `sk-ant-api03-${r.s(W, 93)}AA`, header: 'x-api-key: {}', js: "const anthropic = new Anthropic({ apiKey: '{}' });", py: 'client = anthropic.Anthropic(api_key="{}")' },
  { kind: 'anthropic-admin-key', source: GL + 'anthropic-admin-api-key', names: ['ANTHROPIC_ADMIN_KEY'], gen: (r) => `sk-ant-admin01-${r.s(W, 93)}AA`, header: 'x-api-key: {}' },
  { kind: 'groq-api-key', source: TH + 'groq (gsk_ + 52)', names: ['GROQ_API_KEY'], gen: (r) => 'gsk_' + r.s(AN, 52), header: BEARER, py: 'client = Groq(api_key="{}")' },
  { kind: 'perplexity-api-key', source: GL + 'perplexity-api-key', names: ['PPLX_API_KEY'], gen: (r) => 'pplx-' + r.s(AN, 48), header: BEARER },
  // Google
  { kind: 'google-api-key', source: GL + 'gcp-api-key', names: ['GOOGLE_API_KEY', 'GEMINI_API_KEY', 'MAPS_API_KEY'], gen: (r) => 'AIza' + r.s(W, 35), query: 'key', header: 'X-Goog-Api-Key: {}', js: "const genAI = new GoogleGenerativeAI('{}');", py: 'genai.configure(api_key="{}")' },
  { kind: 'google-oauth-client-secret', source: 'Google Cloud OAuth client secrets (GOCSPX- prefix, 2021+)', names: ['GOOGLE_CLIENT_SECRET'], gen: (r) => 'GOCSPX-' + r.s(W, 28) },
  { kind: 'google-oauth-access-token', source: 'Google OAuth 2.0 docs (ya29. access tokens)', names: ['GOOGLE_ACCESS_TOKEN'], gen: (r) => 'ya29.' + r.s(W, r.int(150, 220)), header: BEARER },
  { kind: 'google-refresh-token', source: 'gcloud application_default_credentials.json refresh_token (1// prefix)', names: ['GOOGLE_REFRESH_TOKEN'], gen: (r) => '1//0' + r.s(W, r.int(95, 100)) },
  { kind: 'gcp-service-account-key', source: 'Google Cloud service account key JSON (private_key, PKCS#8, \\n-escaped)', names: ['private_key'], gen: (r) => pemBody(r, 'private-key-pkcs8').split('\n').join('\\n'), shape: 'gsa' },
  // Azure
  { kind: 'azure-storage-account-key', source: TH + 'azure_storage (88-char base64 AccountKey); Azure connection-string docs', names: ['AZURE_STORAGE_CONNECTION_STRING', 'AzureWebJobsStorage', 'STORAGE_CONNECTION'], gen: (r) => r.s(B64, 86) + '==', wrap: (r, v) => ({ text: `DefaultEndpointsProtocol=https;AccountName=${r.pick(WORDS)}${r.s(L + D, 6)};AccountKey=${v};EndpointSuffix=core.windows.net` }) },
  { kind: 'azure-sas-signature', source: 'Azure docs "Create a service SAS" (sig parameter, URL-encoded base64 HMAC)', names: ['AZURE_BLOB_SAS_URL', 'EXPORT_URL'], gen: (r) => encodeURIComponent(b64(r.bytes(32))), wrap: (r, v) => ({ text: `https://${r.pick(WORDS)}${r.s(L + D, 5)}.blob.core.windows.net/${r.pick(['exports', 'backups', 'uploads'])}/data-${r.int(1, 999)}.csv?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2025-0${r.int(1, 9)}-1${r.int(0, 9)}T18:00:00Z&st=2024-0${r.int(1, 9)}-0${r.int(1, 9)}T10:00:00Z&spr=https&sig=${v}` }) },
  { kind: 'azure-ad-client-secret', source: GL + 'azure-ad-client-secret (xxxNQ~…)', names: ['AZURE_CLIENT_SECRET', 'ClientSecret'], gen: (r) => r.s(AN, 3) + r.s(D, 1) + 'Q~' + r.s(AN + '_~.-', 34) },
  // package registries
  { kind: 'npm-token', source: GL + 'npm-access-token', names: ['NPM_TOKEN', 'NODE_AUTH_TOKEN'], gen: (r) => 'npm_' + r.s(AN, 36), header: BEARER, cli: 'npm config set //registry.npmjs.org/:_authToken {}' },
  { kind: 'pypi-token', source: GL + 'pypi-upload-token', names: ['PYPI_TOKEN', 'TWINE_PASSWORD'], gen: (r) => 'pypi-AgEIcHlwaS5vcmc' + r.s(W, r.int(60, 160)), cli: 'twine upload -u __token__ -p {} dist/*' },
  { kind: 'crates-io-token', source: 'crates.io API token format (cio + 32 alnum)', names: ['CARGO_REGISTRY_TOKEN'], gen: (r) => 'cio' + r.s(AN, 32), cli: 'cargo publish --token {}' },
  { kind: 'rubygems-api-key', source: GL + 'rubygems-api-token', names: ['GEM_HOST_API_KEY'], gen: (r) => 'rubygems_' + r.s(HEX, 48) },
  { kind: 'docker-hub-pat', source: 'Docker Hub access tokens (dckr_pat_ prefix); TruffleHog dockerhub', names: ['DOCKERHUB_TOKEN', 'DOCKER_PASSWORD'], gen: (r) => 'dckr_pat_' + r.s(W, 27), cli: 'docker login -u acmebuild -p {}' },
  { kind: 'artifactory-api-key', source: GL + 'artifactory-api-key', names: ['ARTIFACTORY_API_KEY', 'JFROG_API_KEY'], gen: (r) => 'AKCp' + r.s(AN, 69), header: 'X-JFrog-Art-Api: {}' },
  { kind: 'clojars-token', source: GL + 'clojars-api-token', names: ['CLOJARS_PASSWORD'], gen: (r) => 'CLOJARS_' + r.s(L + D, 60) },
  // AI / data platforms
  { kind: 'huggingface-token', source: GL + 'huggingface-access-token', names: ['HF_TOKEN', 'HUGGING_FACE_HUB_TOKEN'], gen: (r) => 'hf_' + r.s(U + L, 34), header: BEARER, py: 'api = HfApi(token="{}")', js: "const hf = new HfInference('{}');", cli: 'huggingface-cli login --token {}' },
  { kind: 'huggingface-org-token', source: GL + 'huggingface-organization-api-token', names: ['HF_ORG_TOKEN'], gen: (r) => 'api_org_' + r.s(U + L, 34), header: BEARER },
  { kind: 'databricks-token', source: GL + 'databricks-api-token', names: ['DATABRICKS_TOKEN'], gen: (r) => 'dapi' + r.s(HEX, 32) + (r.chance(0.3) ? '-2' : ''), header: BEARER, py: 'w = WorkspaceClient(host="https://adb-1234567890123456.7.azuredatabricks.net", token="{}")' },
  // email / messaging
  { kind: 'sendgrid-api-key', source: GL + 'sendgrid-api-token (SG.x.y)', names: ['SENDGRID_API_KEY'], gen: (r) => `SG.${r.s(W, 22)}.${r.s(W, 43)}`, header: BEARER, js: "sgMail.setApiKey('{}');", py: 'sg = SendGridAPIClient("{}")' },
  { kind: 'mailgun-api-key', source: GL + 'mailgun-private-api-token; ' + TH + 'mailgun', names: ['MAILGUN_API_KEY'], gen: (r) => r.chance(0.5) ? 'key-' + r.s(HEX, 32) : `${r.s(HEX, 32)}-${r.s(HEX, 8)}-${r.s(HEX, 8)}`, user: 'api', js: "const mg = mailgun.client({ username: 'api', key: '{}' });" },
  { kind: 'mailchimp-api-key', source: GL + 'mailchimp-api-key (hex32-usNN)', names: ['MAILCHIMP_API_KEY'], gen: (r) => `${r.s(HEX, 32)}-us${String(r.int(1, 21)).padStart(2, '0')}`, js: "mailchimp.setConfig({ apiKey: '{}', server: 'us6' });" },
  { kind: 'sendinblue-api-key', source: GL + 'sendinblue-api-token', names: ['BREVO_API_KEY'], gen: (r) => `xkeysib-${r.s(HEX, 64)}-${r.s(AN, 16)}`, header: 'api-key: {}' },
  { kind: 'discord-bot-token', source: TH + 'discordbottoken; Discord docs (Bot auth)', names: ['DISCORD_TOKEN', 'DISCORD_BOT_TOKEN'], gen: (r) => `${b64(digits(r, r.int(18, 19))).replace(/=+$/, '')}.${r.s(W, 6)}.${r.s(W, r.pick([27, 38]))}`, header: 'Authorization: Bot {}', js: "client.login('{}');", py: 'bot.run("{}")' },
  { kind: 'discord-webhook', source: 'Discord webhook URLs (value = the token segment); TruffleHog discordwebhook', names: ['DISCORD_WEBHOOK_URL'], gen: (r) => r.s(W, 68), wrap: (r, v) => ({ text: `https://discord.com/api/webhooks/${digits(r, r.int(18, 19))}/${v}` }), cli: "curl -H 'Content-Type: application/json' -d '{\"content\":\"build ok\"}' {}" },
  { kind: 'telegram-bot-token', source: GL + 'telegram-bot-api-token; Telegram Bot API docs', names: ['TELEGRAM_BOT_TOKEN', 'TG_TOKEN'], gen: (r) => `${digits(r, r.int(8, 10))}:AA${r.s(W, 33)}`, py: 'bot = telegram.Bot(token="{}")', js: "const bot = new Telegraf('{}');" },
  { kind: 'twilio-api-key', source: GL + 'twilio-api-key (SK + 32 hex)', names: ['TWILIO_API_KEY'], gen: (r) => 'SK' + r.s(HEX, 32), py: 'client = Client("{}", os.environ["TWILIO_API_SECRET"], "{AC}")' },
  { kind: 'twilio-auth-token', source: 'Twilio docs (Account SID AC… + 32-hex auth token)', names: ['TWILIO_AUTH_TOKEN'], gen: (r) => r.s(HEX, 32), user: '{AC}', js: "const client = twilio('{AC}', '{}');", py: 'client = Client("{AC}", "{}")' },
  // hosting / infra
  { kind: 'shopify-access-token', source: GL + 'shopify-access-token', names: ['SHOPIFY_ACCESS_TOKEN'], gen: (r) => 'shpat_' + r.s(HEX, 32), header: 'X-Shopify-Access-Token: {}' },
  { kind: 'shopify-shared-secret', source: GL + 'shopify-shared-secret', names: ['SHOPIFY_API_SECRET'], gen: (r) => 'shpss_' + r.s(HEX, 32) },
  { kind: 'digitalocean-pat', source: GL + 'digitalocean-pat', names: ['DIGITALOCEAN_TOKEN', 'DO_TOKEN'], gen: (r) => 'dop_v1_' + r.s(HEX, 64), header: BEARER, cli: 'doctl auth init --access-token {}' },
  { kind: 'digitalocean-oauth-token', source: GL + 'digitalocean-access-token', names: ['DO_OAUTH_TOKEN'], gen: (r) => 'doo_v1_' + r.s(HEX, 64), header: BEARER },
  { kind: 'heroku-api-key', source: GL + 'heroku-api-key and heroku-api-key-v2', names: ['HEROKU_API_KEY'], gen: (r) => r.chance(0.5) ? uuid(r) : 'HRKU-AA' + r.s(W, 58), header: BEARER, cli: 'HEROKU_API_KEY={} heroku apps --all' },
  { kind: 'flyio-token', source: GL + 'flyio-access-token', names: ['FLY_API_TOKEN'], gen: (r) => 'fo1_' + r.s(W, 43), header: BEARER, cli: 'fly deploy --access-token {}' },
  { kind: 'cloudflare-api-token', source: GL + 'cloudflare-api-key (40 chars)', names: ['CLOUDFLARE_API_TOKEN', 'CF_API_TOKEN'], gen: (r) => r.s(W, 40), header: BEARER, js: "const cf = new Cloudflare({ apiToken: '{}' });", cli: 'CLOUDFLARE_API_TOKEN={} npx wrangler deploy' },
  { kind: 'cloudflare-global-api-key', source: GL + 'cloudflare-global-api-key (37 hex)', names: ['CLOUDFLARE_API_KEY', 'CF_API_KEY'], gen: (r) => r.s(HEX, 37), header: 'X-Auth-Key: {}' },
  { kind: 'cloudflare-origin-ca-key', source: GL + 'cloudflare-origin-ca-key', names: ['CF_ORIGIN_CA_KEY'], gen: (r) => `v1.0-${r.s(HEX, 24)}-${r.s(HEX, 146)}`, header: 'X-Auth-User-Service-Key: {}' },
  { kind: 'vault-token', source: GL + 'vault-service-token (hvs. / legacy s.)', names: ['VAULT_TOKEN'], gen: (r) => r.chance(0.8) ? 'hvs.' + r.s(W, r.int(90, 120)) : 's.' + r.s(L + D, 12) + r.s(U + D, 12), header: 'X-Vault-Token: {}', py: 'client = hvac.Client(url="https://vault.internal:8200", token="{}")', cli: 'vault login {}' },
  { kind: 'vault-batch-token', source: GL + 'vault-batch-token', names: ['VAULT_BATCH_TOKEN'], gen: (r) => 'hvb.' + r.s(W, r.int(138, 200)), header: 'X-Vault-Token: {}' },
  { kind: 'doppler-token', source: GL + 'doppler-api-token; Doppler docs (dp.pt./dp.st./dp.ct.)', names: ['DOPPLER_TOKEN'], gen: (r) => `dp.${r.pick(['pt', 'st', 'ct', 'sa'])}.${r.s(AN, 43)}`, header: BEARER, cli: 'doppler configure set token {} --scope /srv/app' },
  { kind: 'terraform-cloud-token', source: GL + 'hashicorp-tf-api-token (.atlasv1.)', names: ['TFE_TOKEN', 'TF_TOKEN_app_terraform_io'], gen: (r) => `${r.s(AN, 14)}.atlasv1.${r.s(W, 67)}`, header: BEARER, cli: 'TF_TOKEN_app_terraform_io={} terraform plan -out plan.bin' },
  { kind: 'pulumi-access-token', source: GL + 'pulumi-api-token', names: ['PULUMI_ACCESS_TOKEN'], gen: (r) => 'pul-' + r.s(HEX, 40), header: 'Authorization: token {}', cli: 'PULUMI_ACCESS_TOKEN={} pulumi up --yes' },
  { kind: 'planetscale-token', source: GL + 'planetscale-api-token', names: ['PLANETSCALE_SERVICE_TOKEN'], gen: (r) => 'pscale_tkn_' + r.s(W, 43) },
  { kind: 'planetscale-password', source: GL + 'planetscale-password', names: ['DATABASE_PASSWORD', 'PSCALE_PASSWORD'], gen: (r) => 'pscale_pw_' + r.s(W, 43) },
  { kind: 'supabase-access-token', source: TH + 'supabasetoken (sbp_ + 40)', names: ['SUPABASE_ACCESS_TOKEN'], gen: (r) => 'sbp_' + r.s(HEX, 40), header: BEARER },
  { kind: 'openshift-token', source: GL + 'openshift-user-token', names: ['OC_TOKEN'], gen: (r) => 'sha256~' + r.s(W, 43), header: BEARER, cli: 'oc login --token={} --server=https://api.ocp.example.net:6443' },
  { kind: 'alibaba-access-key-id', source: GL + 'alibaba-access-key-id', names: ['ALIBABA_CLOUD_ACCESS_KEY_ID'], gen: (r) => 'LTAI' + r.s(AN, 20) },
  { kind: 'alibaba-secret-key', source: GL + 'alibaba-secret-key (30 alnum)', names: ['ALIBABA_CLOUD_ACCESS_KEY_SECRET'], gen: (r) => r.s(AN, 30) },
  // observability
  { kind: 'datadog-api-key', source: 'Datadog docs (32-hex API key); ' + GL + 'datadog-access-token', names: ['DD_API_KEY', 'DATADOG_API_KEY'], gen: (r) => r.s(HEX, 32), header: 'DD-API-KEY: {}' },
  { kind: 'datadog-app-key', source: 'Datadog docs (40-hex application key)', names: ['DD_APP_KEY', 'DATADOG_APP_KEY'], gen: (r) => r.s(HEX, 40), header: 'DD-APPLICATION-KEY: {}' },
  { kind: 'newrelic-user-key', source: GL + 'new-relic-user-api-key (NRAK-)', names: ['NEW_RELIC_API_KEY'], gen: (r) => 'NRAK-' + r.s(UD, 27), header: 'API-Key: {}' },
  { kind: 'newrelic-license-key', source: 'New Relic docs (40-char ingest license key ending NRAL)', names: ['NEW_RELIC_LICENSE_KEY'], gen: (r) => r.s(HEX, 36) + 'NRAL' },
  { kind: 'sentry-dsn', source: 'Sentry docs "Data Source Name" (value = the key in https://KEY@oN.ingest.sentry.io/N)', names: ['SENTRY_DSN'], gen: (r) => r.s(HEX, 32), wrap: (r, v) => ({ text: `https://${v}@o${digits(r, 6)}.ingest.${r.pick(['', 'us.', 'de.'])}sentry.io/${digits(r, 7)}` }), js: "Sentry.init({ dsn: '{}', tracesSampleRate: 0.2 });", py: 'sentry_sdk.init(dsn="{}", traces_sample_rate=0.2)' },
  { kind: 'sentry-user-token', source: GL + 'sentry-user-token', names: ['SENTRY_AUTH_TOKEN'], gen: (r) => 'sntryu_' + r.s(HEX, 64), header: BEARER, cli: 'sentry-cli --auth-token {} releases new 2.14.0' },
  { kind: 'grafana-service-account-token', source: GL + 'grafana-service-account-token', names: ['GRAFANA_TOKEN'], gen: (r) => `glsa_${r.s(AN, 32)}_${r.s(HEX, 8)}`, header: BEARER },
  { kind: 'grafana-cloud-token', source: GL + 'grafana-cloud-api-token', names: ['GRAFANA_CLOUD_TOKEN'], gen: (r) => 'glc_' + b64(JSON.stringify({ o: digits(r, 6), n: `stack-${digits(r, 6)}-hm-read`, k: r.s(AN, 24), m: { r: 'prod-us-east-0' } })), header: BEARER },
  { kind: 'dynatrace-token', source: GL + 'dynatrace-api-token', names: ['DT_API_TOKEN'], gen: (r) => `dt0c01.${r.s(UD, 24)}.${r.s(UD, 64)}`, header: 'Authorization: Api-Token {}' },
  // SaaS
  { kind: 'linear-api-key', source: GL + 'linear-api-key', names: ['LINEAR_API_KEY'], gen: (r) => 'lin_api_' + r.s(AN, 40), header: 'Authorization: {}', js: "const linear = new LinearClient({ apiKey: '{}' });" },
  { kind: 'notion-token', source: GL + 'notion-api-token; Notion docs (legacy secret_ prefix)', names: ['NOTION_TOKEN', 'NOTION_API_KEY'], gen: (r) => r.chance(0.6) ? 'ntn_' + r.s(D, 11) + r.s(AN, 35) : 'secret_' + r.s(AN, 43), header: BEARER, js: "const notion = new Client({ auth: '{}' });", py: 'notion = Client(auth="{}")' },
  { kind: 'atlassian-api-token', source: GL + 'atlassian-api-token (ATATT3…)', names: ['JIRA_API_TOKEN', 'CONFLUENCE_API_TOKEN', 'ATLASSIAN_API_TOKEN'], gen: (r) => 'ATATT3' + r.s(W, 177) + '=' + r.s('0123456789ABCDEF', 8), header: BEARER },
  { kind: 'square-access-token', source: GL + 'square-access-token', names: ['SQUARE_ACCESS_TOKEN'], gen: (r) => 'EAAA' + r.s(W, 60), header: BEARER },
  { kind: 'square-oauth-secret', source: 'Square developer docs (sq0csp- application secret)', names: ['SQUARE_APPLICATION_SECRET'], gen: (r) => 'sq0csp-' + r.s(W, 43) },
  { kind: 'postman-api-key', source: GL + 'postman-api-token', names: ['POSTMAN_API_KEY'], gen: (r) => `PMAK-${r.s(HEX, 24)}-${r.s(HEX, 34)}`, header: 'X-Api-Key: {}' },
  { kind: 'okta-api-token', source: GL + 'okta-access-token (00 + 40)', names: ['OKTA_API_TOKEN'], gen: (r) => '00' + r.s(W, 40), header: 'Authorization: SSWS {}' },
  { kind: 'sourcegraph-token', source: GL + 'sourcegraph-access-token', names: ['SRC_ACCESS_TOKEN'], gen: (r) => `sgp_${r.s(HEX, 16)}_${r.s(HEX, 40)}`, header: 'Authorization: token {}' },
  { kind: 'shippo-api-token', source: GL + 'shippo-api-token', names: ['SHIPPO_API_KEY'], gen: (r) => 'shippo_live_' + r.s(HEX, 40), header: 'Authorization: ShippoToken {}' },
  { kind: 'easypost-api-key', source: GL + 'easypost-api-token', names: ['EASYPOST_API_KEY'], gen: (r) => 'EZAK' + r.s(AN, 54) },
  { kind: 'prefect-api-key', source: GL + 'prefect-api-token', names: ['PREFECT_API_KEY'], gen: (r) => 'pnu_' + r.s(AN, 36), header: BEARER },
  { kind: 'maxmind-license-key', source: GL + 'maxmind-license-key', names: ['MAXMIND_LICENSE_KEY'], gen: (r) => `${r.s(AN, 6)}_${r.s(AN, 29)}_mmk` },
  { kind: 'readme-api-key', source: GL + 'readme-api-token', names: ['README_API_KEY'], gen: (r) => 'rdme_' + r.s(L + D, 70) },
  { kind: 'scalingo-token', source: GL + 'scalingo-api-token', names: ['SCALINGO_API_TOKEN'], gen: (r) => 'tk-us-' + r.s(W, 48) },
  { kind: 'infracost-api-key', source: GL + 'infracost-api-token', names: ['INFRACOST_API_KEY'], gen: (r) => 'ico-' + r.s(AN, 32) },
  { kind: 'duffel-token', source: GL + 'duffel-api-token', names: ['DUFFEL_ACCESS_TOKEN'], gen: (r) => 'duffel_live_' + r.s(W, 43), header: BEARER },
  { kind: 'harness-token', source: GL + 'harness-api-key', names: ['HARNESS_API_KEY'], gen: (r) => `pat.${r.s(W, 22)}.${r.s(AN, 24)}.${r.s(AN, 20)}`, header: 'x-api-key: {}' },
  { kind: 'frameio-token', source: GL + 'frameio-api-token', names: ['FRAMEIO_TOKEN'], gen: (r) => 'fio-u-' + r.s(W, 64), header: BEARER },
  { kind: 'facebook-page-token', source: GL + 'facebook-page-access-token (EAAM/EAAC)', names: ['FB_PAGE_ACCESS_TOKEN'], gen: (r) => r.pick(['EAAM', 'EAAC']) + r.s(AN, r.int(120, 200)), query: 'access_token' },
  { kind: 'snyk-token', source: GL + 'snyk-api-token (UUID)', names: ['SNYK_TOKEN'], gen: (r) => uuid(r), header: 'Authorization: token {}', cli: 'snyk auth {}' },
  { kind: 'onepassword-service-account-token', source: GL + '1password-service-account-token', names: ['OP_SERVICE_ACCOUNT_TOKEN'], gen: (r) => 'ops_eyJ' + r.s(B64, r.int(260, 400)), header: BEARER },
  { kind: 'onepassword-secret-key', source: GL + '1password-secret-key', names: ['OP_SECRET_KEY'], gen: (r) => `A3-${r.s(UD, 6)}-${r.s(UD, 6)}-${r.s(UD, 5)}-${r.s(UD, 5)}-${r.s(UD, 5)}-${r.s(UD, 5)}` },
  { kind: 'age-secret-key', source: GL + 'age-secret-key; age spec (bech32)', names: ['SOPS_AGE_KEY', 'AGE_SECRET_KEY'], gen: (r) => 'AGE-SECRET-KEY-1' + r.s(BECH, 58) },
  // tokens and keys without vendor prefix
  { kind: 'jwt', source: GL + 'jwt; RFC 7519', names: ['JWT', 'ACCESS_TOKEN', 'SUPABASE_SERVICE_ROLE_KEY', 'ID_TOKEN'], gen: (r) => jwt(r, false), header: BEARER, query: 'token', js: "const supabase = createClient('https://qwertyabcdefghij.supabase.co', '{}');" },
  { kind: 'jwt-long', source: GL + 'jwt; RFC 7519 (payload with many claims, >800 chars)', names: ['ID_TOKEN', 'SESSION_JWT', 'AUTH0_TOKEN'], gen: (r) => jwt(r, true), header: BEARER },
  { kind: 'private-key-rsa', source: GL + 'private-key; RFC 7468 (PKCS#1)', names: ['PRIVATE_KEY'], gen: (r) => pemBody(r, 'private-key-rsa'), shape: 'pem' },
  { kind: 'private-key-ec', source: GL + 'private-key; RFC 5915', names: ['PRIVATE_KEY'], gen: (r) => pemBody(r, 'private-key-ec'), shape: 'pem' },
  { kind: 'private-key-openssh', source: GL + 'private-key; OpenSSH PROTOCOL.key', names: ['SSH_PRIVATE_KEY'], gen: (r) => pemBody(r, 'private-key-openssh'), shape: 'pem' },
  { kind: 'private-key-pkcs8', source: GL + 'private-key; RFC 5208 / RFC 7468', names: ['JWT_PRIVATE_KEY'], gen: (r) => pemBody(r, 'private-key-pkcs8'), shape: 'pem' },
  { kind: 'private-key-pgp', source: GL + 'private-key (PRIVATE KEY BLOCK); RFC 4880 armor', names: ['GPG_PRIVATE_KEY'], gen: (r) => pemBody(r, 'private-key-pgp'), shape: 'pem' },
  { kind: 'kubeconfig-client-key-data', source: 'Kubernetes kubeconfig docs (client-key-data = base64 PEM)', names: ['client-key-data'], gen: (r) => b64(fullPem('private-key-rsa', pemBody(r, 'private-key-rsa'))), shape: 'kcfg' },
  { kind: 'docker-registry-auth', source: 'Docker docs: ~/.docker/config.json auths.<registry>.auth = base64(user:password)', names: ['auth'], gen: (r) => b64(`${r.pick(USERS)}:${r.chance(0.5) ? genericValue(r) : 'dckr_pat_' + r.s(W, 27)}`), shape: 'docker' },
  { kind: 'basic-auth-credential', source: 'RFC 7617 (Authorization: Basic base64(user:password))', names: ['BASIC_AUTH', 'AUTH_HEADER'], gen: (r) => b64(`${r.pick(USERS)}:${genericValue(r)}`), header: 'Authorization: Basic {}' },
  { kind: 'bearer-token', source: 'RFC 6750 (opaque bearer token); ' + GL + 'curl-auth-header', names: ['API_TOKEN', 'SERVICE_TOKEN', 'BEARER_TOKEN'], gen: (r) => r.s(r.pick([AN, W, AN + '._~']), r.int(32, 64)), header: BEARER },
  { kind: 'url-password', source: 'RFC 3986 userinfo (scheme://user:password@host); libpq/JDBC/Redis URI docs', names: ['DATABASE_URL', 'REDIS_URL', 'MONGODB_URI', 'AMQP_URL', 'CELERY_BROKER_URL'], gen: genericValue, wrap: (r, v) => { const e = enc(v); const sch = r.pick(['postgres', 'postgresql', 'mysql', 'redis', 'mongodb+srv', 'amqp']); const port = sch === 'mongodb+srv' ? '' : ':' + r.pick(['5432', '3306', '6379', '5672']); return { text: `${sch}://${r.pick(USERS)}:${e.text}@${host(r)}${port}/${r.pick(WORDS)}`, pieces: e.pieces }; }, js: "const sequelize = new Sequelize('{}');", py: 'engine = create_engine("{}")' },
  { kind: 'generic-password', source: GL + 'generic-api-key / database-password (keyword + value)', names: ['password', 'passwd', 'pwd', 'DB_PASSWORD', 'db_password', 'MYSQL_ROOT_PASSWORD', 'POSTGRES_PASSWORD', 'REDIS_PASSWORD', 'SMTP_PASSWORD', 'admin_password', 'パスワード', 'contraseña', 'пароль', '密码', 'Passwort', 'mot_de_passe', 'senha', '비밀번호'], gen: genericValue, user: 'admin', py: 'conn = psycopg2.connect(host="db", user="app", password="{}")', js: "const pool = new Pool({ user: 'app', host: 'db', password: '{}' });", cli: 'mysql -h db.internal -u root -p{} orders' },
  { kind: 'generic-secret', source: GL + 'generic-api-key (secret keyword)', names: ['secret', 'client_secret', 'SECRET_KEY', 'APP_SECRET', 'JWT_SECRET', 'SESSION_SECRET', 'clientSecret', 'webhook_secret', '秘密', 'secreto', 'секрет'], gen: genericValue },
  { kind: 'generic-api-key', source: GL + 'generic-api-key (api keyword)', names: ['api_key', 'apiKey', 'API_KEY', 'x_api_key', 'apikey', 'SERVICE_API_KEY', 'APIキー', 'clave_api', 'ключ_api'], gen: genericValue, query: 'api_key', header: 'X-API-Key: {}' },
  { kind: 'generic-token', source: GL + 'generic-api-key (token keyword)', names: ['access_token', 'auth_token', 'AUTH_TOKEN', 'refresh_token', 'token', 'accessToken', 'authToken', 'トークン', 'токен', '令牌'], gen: genericValue, header: 'Authorization: Token {}', query: 'access_token', cli: './scripts/deploy.sh --env prod --token {}' },
  { kind: 'generic-private-key', source: GL + 'generic-api-key (key keyword, raw key material)', names: ['private_key', 'PRIVATE_KEY', 'signing_key', 'privateKey', 'WALLET_PRIVATE_KEY'], gen: (r) => r.pick([() => b64(r.bytes(32)), () => r.s(HEX, 64), () => b64(r.bytes(64))])() },
];

export function kinds(): string[] { return SPECS.map((s) => s.kind); }

function makeItem(r: Rng, sp: Spec, i: number): Item {
  const value = sp.gen(r);
  const name = sp.kind.startsWith('generic') ? (sp.names[i % sp.names.length] as string) : r.pick(sp.names);
  const ascii = /^[\x20-\x7e]+$/.test(name) ? name : (sp.names[0] as string);
  const w = sp.wrap ? sp.wrap(r, value) : { text: value };
  return { kind: sp.kind, value, source: sp.source, name, ascii, shape: sp.shape ?? 'line', display: w.text, pieces: w.pieces, plain: w.text === value && !w.pieces, header: sp.header, user: sp.user, query: sp.query, js: sp.js, py: sp.py, cli: sp.cli };
}

// ---------------------------------------------------------------- text helpers
type Style = 'UP' | 'snake' | 'camel' | 'kebab';
function sty(n: string, st: Style): string {
  if (!/^[A-Za-z0-9_-]+$/.test(n)) return n;
  const parts = n.split(/[_-]|(?<=[a-z0-9])(?=[A-Z])/).filter(Boolean).map((p) => p.toLowerCase());
  if (st === 'UP') return parts.join('_').toUpperCase();
  if (st === 'snake') return parts.join('_');
  if (st === 'kebab') return parts.join('-');
  return parts.map((p, i) => (i ? p[0]?.toUpperCase() + p.slice(1) : p)).join('');
}
const yq = (v: string): string => (/^[A-Za-z0-9][A-Za-z0-9_.\/+=~:;@%-]*$/.test(v) && !/^(true|false|null|yes|no|on|off|\d+)$/i.test(v) ? v : JSON.stringify(v));
const safe = (v: string): boolean => /^[A-Za-z0-9_.\/:@%+=,~-]+$/.test(v);
const shq = (v: string): string => (safe(v) ? v : `'${v}'`);
const fill = (tpl: string, v: string, r: Rng): string => tpl.replace('{AC}', () => 'AC' + r.s(HEX, 32)).replace('{}', () => v);
const provider = (it: Item): string => (it.kind.startsWith('generic') || it.kind === 'bearer-token' || it.kind.startsWith('jwt') || it.kind === 'basic-auth-credential' ? 'internal' : it.kind.split('-')[0] as string);
const API_HOST: Record<string, string> = { github: 'api.github.com', gitlab: 'gitlab.com', slack: 'slack.com', stripe: 'api.stripe.com', openai: 'api.openai.com', anthropic: 'api.anthropic.com', google: 'generativelanguage.googleapis.com', huggingface: 'huggingface.co', sendgrid: 'api.sendgrid.com', discord: 'discord.com', digitalocean: 'api.digitalocean.com', heroku: 'api.heroku.com', datadog: 'api.datadoghq.com', newrelic: 'api.newrelic.com', vault: 'vault.internal:8200', databricks: 'adb-1234567890123456.7.azuredatabricks.net', linear: 'api.linear.app', notion: 'api.notion.com', atlassian: 'acme.atlassian.net', cloudflare: 'api.cloudflare.com', square: 'connect.squareup.com', supabase: 'api.supabase.com', postman: 'api.getpostman.com', grafana: 'grafana.example.net', pulumi: 'api.pulumi.com', terraform: 'app.terraform.io', internal: 'api.internal.example.net', npm: 'registry.npmjs.org', shopify: 'acme.myshopify.com' };
const apiHost = (it: Item): string => API_HOST[provider(it)] ?? `api.${provider(it)}.com`;
const hdr = (it: Item): string => (it.header ?? BEARER).replace('{}', () => it.display);
const lines = (...xs: (string | false | undefined)[]): string => xs.filter((x): x is string => typeof x === 'string').join('\n') + '\n';
const commitHash = (r: Rng): string => r.s(HEX, 40);

// ---------------------------------------------------------------- renderers
type Put = (it: Item, shown?: string, pieces?: string[]) => string;
interface Renderer { id: string; labels: string[]; max: number; named?: boolean; ok: (it: Item) => boolean; render: (r: Rng, its: Item[], put: Put) => string; labelFor?: (it: Item, r: Rng) => string }
const line = (it: Item): boolean => it.shape === 'line';
const isK = (...ks: string[]) => (it: Item): boolean => ks.includes(it.kind);
const pre = (...ps: string[]) => (it: Item): boolean => ps.some((p) => it.kind.startsWith(p));

const RENDERERS: Renderer[] = [
  { id: 'dotenv', labels: ['cat .env', 'read .env', 'cat .env.production', 'read services/api/.env.local', 'cat .envrc'], max: 6, ok: line, render(r, its, put) {
    const out = ['# local overrides — keep out of git', `NODE_ENV=${r.pick(['production', 'development', 'staging'])}`, `PORT=${r.int(3000, 9000)}`, `LOG_LEVEL=${r.pick(['info', 'debug', 'warn'])}`, `APP_URL=https://${host(r)}`];
    for (const it of its) { const n = sty(it.ascii, 'UP'); const v = put(it); out.splice(r.int(1, out.length), 0, r.pick([`${n}=${v}`, `${n}="${v}"`, `${n}='${v}'`, `${n} = ${v}`, `export ${n}=${shq(v)}`, `export ${n}="${v}"`])); }
    out.push(`FEATURE_FLAGS=${r.pick(['beta-search,new-nav', 'none'])}`, 'TZ=UTC');
    return lines(...out);
  } },
  { id: 'printenv', labels: ['printenv', 'env', 'bash: env | sort', 'printenv | sort'], max: 5, ok: line, render(r, its, put) {
    const out = ['HOME=/home/dev', 'HOSTNAME=' + r.pick(WORDS) + '-' + r.s(L + D, 5), 'LANG=C.UTF-8', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'PWD=/srv/app', 'SHELL=/bin/bash', 'SHLVL=1', 'TERM=xterm-256color', 'USER=dev', 'NODE_VERSION=20.11.1', 'YARN_VERSION=1.22.19', `KUBERNETES_SERVICE_HOST=${ip(r)}`, 'KUBERNETES_SERVICE_PORT=443', '_=/usr/bin/printenv'];
    for (const it of its) out.push(`${sty(it.ascii, 'UP')}=${put(it)}`);
    return lines(...out.sort());
  } },
  { id: 'docker-compose', named: true, labels: ['cat docker-compose.yml', 'read docker-compose.override.yml', 'docker compose config'], max: 5, ok: line, render(r, its, put) {
    const list = r.chance(0.5);
    const env = its.map((it) => (list ? `      - ${sty(it.ascii, 'UP')}=${put(it)}` : `      ${sty(it.name, 'UP')}: ${yq(put(it))}`));
    return lines('services:', '  api:', `    image: ghcr.io/acme/${r.pick(WORDS)}:${r.int(1, 4)}.${r.int(0, 20)}.${r.int(0, 9)}`, '    restart: unless-stopped', '    ports:', `      - "${r.int(3000, 9000)}:8080"`, '    depends_on:', '      - db', '    environment:', ...env, '  db:', '    image: postgres:16-alpine', '    volumes:', '      - pgdata:/var/lib/postgresql/data', '    healthcheck:', '      test: ["CMD-SHELL", "pg_isready -U postgres"]', '      interval: 10s', 'volumes:', '  pgdata: {}');
  } },
  { id: 'github-actions', labels: ['cat .github/workflows/deploy.yml', 'read .github/workflows/release.yml'], max: 4, ok: line, render(r, its, put) {
    const top = its.slice(0, Math.ceil(its.length / 2)); const step = its.slice(top.length);
    return lines('name: deploy', 'on:', '  push:', '    branches: [main]', 'env:', `  REGION: ${r.pick(['eu-west-1', 'us-east-1'])}`, ...top.map((it) => `  ${sty(it.ascii, 'UP')}: ${yq(put(it))}`), 'jobs:', '  deploy:', '    runs-on: ubuntu-latest', '    steps:', '      - uses: actions/checkout@v4', '      - uses: actions/setup-node@v4', '        with:', '          node-version: 20', '      - run: npm ci && npm run build', '      - name: Deploy', '        run: ./scripts/deploy.sh', step.length > 0 && '        env:', ...step.map((it) => `          ${sty(it.ascii, 'UP')}: ${yq(put(it))}`));
  } },
  { id: 'k8s-secret-stringdata', named: true, labels: ['cat k8s/secret.yaml', 'read deploy/overlays/prod/secrets.yaml'], max: 5, ok: line, render(r, its, put) {
    return lines('apiVersion: v1', 'kind: Secret', 'metadata:', `  name: ${r.pick(WORDS)}-credentials`, `  namespace: ${r.pick(['prod', 'default', 'payments'])}`, '  labels:', '    app.kubernetes.io/managed-by: kustomize', 'type: Opaque', 'stringData:', ...its.map((it) => `  ${sty(it.name, r.pick(['kebab', 'UP', 'snake'] as Style[]))}: ${yq(put(it))}`));
  } },
  { id: 'k8s-secret-data', labels: ['kubectl get secret app-secrets -o yaml', 'kubectl -n prod get secret api-env -o yaml'], max: 5, ok: (it) => line(it) && it.plain, render(r, its, put) {
    const data = its.map((it) => { const e = b64(it.value); return `  ${sty(it.ascii, 'UP')}: ${put(it, e, [e])}`; });
    return lines('apiVersion: v1', 'data:', ...data, 'kind: Secret', 'metadata:', `  creationTimestamp: "${iso(r).slice(0, 19)}Z"`, `  name: ${r.pick(WORDS)}-env`, '  namespace: prod', `  resourceVersion: "${r.int(100000, 9999999)}"`, `  uid: ${uuid(r)}`, 'type: Opaque');
  } },
  { id: 'k8s-deployment-env', labels: ['cat k8s/deployment.yaml', 'kubectl get deploy api -o yaml'], max: 4, ok: line, render(r, its, put) {
    const env = its.flatMap((it) => [`            - name: ${sty(it.ascii, 'UP')}`, `              value: ${yq(put(it))}`]);
    const app = r.pick(WORDS);
    return lines('apiVersion: apps/v1', 'kind: Deployment', 'metadata:', `  name: ${app}`, 'spec:', `  replicas: ${r.int(1, 6)}`, '  selector:', '    matchLabels:', `      app: ${app}`, '  template:', '    metadata:', '      labels:', `        app: ${app}`, '    spec:', '      containers:', `        - name: ${app}`, `          image: registry.example.net/${app}:${r.s(HEX, 7)}`, '          ports:', '            - containerPort: 8080', '          env:', '            - name: LOG_LEVEL', '              value: info', ...env, '          resources:', '            limits:', '              memory: 512Mi');
  } },
  { id: 'helm-values', named: true, labels: ['cat charts/api/values.yaml', 'read helm/values-prod.yaml', 'helm get values api -n prod'], max: 5, ok: line, render(r, its, put) {
    const out = ['replicaCount: 2', 'image:', '  repository: registry.example.net/api', `  tag: "${r.int(1, 3)}.${r.int(0, 30)}.${r.int(0, 9)}"`, 'ingress:', '  enabled: true', `  host: ${host(r)}`, 'integrations:'];
    its.forEach((it, i) => out.push(`  ${sty(provider(it), 'camel')}${i > 0 && its.slice(0, i).some((o) => provider(o) === provider(it)) ? i + 1 : ''}:`, `    ${sty(it.name, 'camel')}: ${yq(put(it))}`));
    out.push('resources:', '  requests:', '    cpu: 100m');
    return lines(...out);
  } },
  { id: 'toml-config', named: true, labels: ['cat config/app.toml', 'read settings/production.toml'], max: 5, ok: line, render(r, its, put) {
    const out = ['[server]', 'host = "0.0.0.0"', `port = ${r.int(3000, 9000)}`, 'workers = 4', ''];
    for (const [i, it] of its.entries()) { const k = sty(it.name, 'snake'); out.push(`[integrations.${provider(it)}${its.slice(0, i).some((o) => provider(o) === provider(it)) ? '-' + (i + 1) : ''}]`, `${/^[a-z0-9_]+$/.test(k) ? k : JSON.stringify(k)} = ${JSON.stringify(put(it))}`, `timeout_ms = ${r.int(1, 30) * 100}`, ''); }
    return lines(...out, '[log]', 'level = "info"');
  } },
  { id: 'json-config', named: true, labels: ['cat config/production.json', 'read appsettings.Production.json', 'read config/default.json'], max: 5, ok: line, render(r, its, put) {
    const o: Record<string, unknown> = { name: r.pick(WORDS), port: r.int(3000, 9000), logging: { level: 'info', pretty: false } };
    const svc: Record<string, Record<string, string>> = {};
    for (const it of its) { const g = (svc[sty(provider(it), 'camel')] ??= {}); let k = sty(it.name, 'camel'); while (k in g) k += '2'; g[k] = put(it); }
    o['services'] = svc; o['features'] = { search: true, betaCheckout: r.chance(0.5) };
    return JSON.stringify(o, null, 2) + '\n';
  } },
  { id: 'tfvars', named: true, labels: ['cat prod.tfvars', 'read infra/terraform.tfvars', 'cat envs/staging.auto.tfvars'], max: 5, ok: line, render(r, its, put) {
    return lines(`region = "${r.pick(['eu-west-1', 'us-east-2'])}"`, 'instance_type = "t3.medium"', `cluster_name = "${r.pick(WORDS)}-prod"`, ...its.map((it) => `${sty(it.name, 'snake')} = ${JSON.stringify(put(it))}`), 'tags = {', '  team = "platform"', '  cost_center = "cc-1042"', '}');
  } },
  { id: 'dockerfile', labels: ['cat Dockerfile', 'read docker/api.Dockerfile'], max: 3, ok: line, render(r, its, put) {
    return lines('FROM node:20-alpine AS build', 'WORKDIR /app', 'COPY package*.json ./', ...its.map((it) => `${r.pick(['ENV', 'ARG', 'ENV'])} ${sty(it.ascii, 'UP')}${r.pick(['=', '='])}${r.chance(0.5) ? put(it) : '"' + put(it) + '"'}`), 'RUN npm ci --omit=dev', 'COPY . .', 'RUN npm run build', 'FROM node:20-alpine', 'COPY --from=build /app/dist /app', 'USER node', 'CMD ["node", "/app/server.js"]');
  } },
  { id: 'ci-log', labels: ['gh run view 8812345678 --log', 'read ci/build-4412.log', 'bash: gitlab-runner exec shell deploy'], max: 4, ok: line, render(r, its, put) {
    const t = (): string => iso(r).replace('Z', r.s(D, 4) + 'Z');
    const out = [`${t()} ##[group]Run ./scripts/deploy.sh`, `${t()} ./scripts/deploy.sh`, `${t()} shell: /usr/bin/bash -e {0}`, `${t()} env:`];
    its.forEach((it, i) => out.push(i % 2 === 0 ? `${t()}   ${sty(it.ascii, 'UP')}: ${put(it)}` : `${t()} + export ${sty(it.ascii, 'UP')}=${put(it)}`));
    out.push(`${t()} ##[endgroup]`, `${t()} Building image ${r.s(HEX, 12)}`, `${t()} Step 3/9 : RUN npm ci`, `${t()} added ${r.int(300, 1400)} packages in ${r.int(5, 40)}s`, `${t()} Deploying to ${r.pick(['prod', 'staging'])}...`, `${t()} deployment "api" successfully rolled out`);
    return lines(...out);
  } },
  { id: 'app-log-kv', named: true, labels: ['tail -n 200 /var/log/app/app.log', 'kubectl logs deploy/api --tail=100', 'journalctl -u api --no-pager'], max: 4, ok: line, render(r, its, put) {
    const out: string[] = [];
    for (let i = 0; i < r.int(6, 14); i++) out.push(`${iso(r)} INFO  [http] request_id=${uuid(r)} method=${r.pick(['GET', 'POST'])} path=/v1/${r.pick(WORDS)} status=${r.pick([200, 200, 201, 404])} duration_ms=${r.int(2, 900)}`);
    for (const it of its) out.splice(r.int(0, out.length), 0, `${iso(r)} DEBUG [config] loaded ${sty(it.name, r.pick(['snake', 'camel'] as Style[]))}=${put(it)} source=${r.pick(['env', 'file', 'vault'])}`);
    return lines(...out);
  } },
  { id: 'app-log-json', labels: ['kubectl logs api-7c9d8 --since=10m', 'read logs/outbound.jsonl'], max: 4, ok: line, render(r, its, put) {
    const out: string[] = [];
    for (let i = 0; i < r.int(4, 10); i++) out.push(JSON.stringify({ ts: iso(r), level: 'info', msg: 'request completed', req_id: uuid(r), status: 200, ms: r.int(1, 400) }));
    for (const it of its) out.splice(r.int(0, out.length), 0, it.header ? JSON.stringify({ ts: iso(r), level: 'debug', msg: 'outbound request', url: `https://${apiHost(it)}/v1/${r.pick(WORDS)}`, headers: { [(it.header.split(':')[0] as string).toLowerCase()]: put(it, hdr(it).replace(/^[^:]+:\s*/, '')) , 'user-agent': 'undici' } }) : JSON.stringify({ ts: iso(r), level: 'debug', msg: 'config resolved', config: { [sty(it.name, 'camel')]: put(it) } }));
    return lines(...out);
  } },
  { id: 'python-settings', named: true, labels: ['cat app/settings.py', 'read config/settings/prod.py'], max: 4, ok: line, render(r, its, put) {
    return lines('import os', 'from pathlib import Path', '', 'BASE_DIR = Path(__file__).resolve().parent.parent', 'DEBUG = False', `ALLOWED_HOSTS = ["${host(r)}"]`, ...its.map((it) => (r.chance(0.7) ? `${sty(it.name, 'UP')} = ${JSON.stringify(put(it))}` : `os.environ.setdefault(${JSON.stringify(sty(it.ascii, 'UP'))}, ${JSON.stringify(put(it))})`)), '', 'CACHES = {', '    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://cache:6379/1"}', '}');
  } },
  { id: 'js-config', named: true, labels: ['cat src/config.ts', 'read config/index.js'], max: 4, ok: line, render(r, its, put) {
    return lines("import { z } from 'zod';", '', 'export const config = {', `  env: '${r.pick(['production', 'staging'])}',`, `  port: ${r.int(3000, 9000)},`, ...its.map((it) => `  ${/^[A-Za-z_$][\w$]*$/.test(sty(it.name, 'camel')) ? sty(it.name, 'camel') : `'${it.name}'`}: '${put(it)}',`), "  region: 'eu-west-1',", '};', '', 'export type Config = typeof config;');
  } },
  { id: 'go-source', named: true, labels: ['cat internal/config/defaults.go', 'read cmd/server/main.go'], max: 3, ok: line, render(r, its, put) {
    return lines('package config', '', 'import "time"', '', 'const (', '\tdefaultTimeout = 30 * time.Second', ...its.map((it) => `\t${sty(it.name, 'camel')} = ${JSON.stringify(put(it))}`), ')', '', 'type Config struct {', '\tAddr    string', '\tTimeout time.Duration', '}', '', `var Default = Config{Addr: ":${r.int(3000, 9000)}", Timeout: defaultTimeout}`);
  } },
  { id: 'java-properties', named: true, labels: ['cat src/main/resources/application.properties', 'read application-prod.properties'], max: 4, ok: line, render(r, its, put) {
    return lines(`spring.application.name=${r.pick(WORDS)}`, 'server.port=8080', `spring.datasource.url=jdbc:postgresql://${host(r)}:5432/app`, 'spring.jpa.hibernate.ddl-auto=validate', ...its.map((it) => `app.${provider(it)}.${sty(it.name, 'kebab')}=${put(it)}`), 'management.endpoints.web.exposure.include=health,info');
  } },
  { id: 'ini-config', named: true, labels: ['cat ~/.my.cnf', 'read config/app.ini', 'cat /etc/app/settings.ini'], max: 4, ok: line, render(r, its, put) {
    const out = ['[client]', `host = ${host(r)}`, 'port = 3306', ''];
    for (const it of its) out.push(`[${provider(it)}]`, `${sty(it.name, 'snake')} = ${put(it)}`, '');
    return lines(...out, '[mysqld]', 'max_connections = 200');
  } },
  { id: 'shell-history', labels: ['cat ~/.bash_history', 'read ~/.zsh_history', 'history | tail -50'], max: 5, ok: line, render(r, its, put) {
    const zsh = r.chance(0.5); const p = (c: string): string => (zsh ? `: ${1714500000 + r.int(0, 9999999)}:0;${c}` : c);
    const out = ['git status', 'ls -la', 'kubectl get pods -n prod', 'cd ~/src/api', 'npm run test -- --watch=false', 'vim .env'].map(p);
    for (const it of its) out.splice(r.int(0, out.length), 0, p(r.chance(0.7) ? `export ${sty(it.ascii, 'UP')}=${shq(put(it))}` : `${sty(it.ascii, 'UP')}=${shq(put(it))} npm run start`));
    return lines(...out);
  } },
  { id: 'shell-trace', labels: ['bash -x ./scripts/release.sh', 'sh -x deploy.sh'], max: 3, ok: line, render(r, its, put) {
    return lines('+ set -euo pipefail', '+ source ./.env', ...its.flatMap((it) => { const v = put(it); return [`++ export ${sty(it.ascii, 'UP')}=${shq(v)}`, `++ ${sty(it.ascii, 'UP')}=${shq(v)}`]; }), `+ VERSION=${r.int(1, 3)}.${r.int(0, 20)}.${r.int(0, 9)}`, '+ docker build -t registry.example.net/api:$VERSION .', '#0 building with "default" instance using docker driver', '+ echo done', 'done');
  } },
  { id: 'git-show', labels: ['git show HEAD', 'git log -p -1', 'git diff HEAD~1'], max: 3, ok: line, render(r, its, put) {
    return lines(`commit ${commitHash(r)}`, `Author: ${r.pick(['Dana Lee', 'Sam Ortiz', 'Kim Park'])} <dev@example.net>`, 'Date:   Tue Apr 30 14:12:09 2024 +0200', '', '    chore: staging config', '', 'diff --git a/config/staging.env b/config/staging.env', `index ${r.s(HEX, 7)}..${r.s(HEX, 7)} 100644`, '--- a/config/staging.env', '+++ b/config/staging.env', `@@ -3,6 +3,${6 + its.length} @@`, ' LOG_LEVEL=info', ' PORT=8080', ...its.map((it) => `+${sty(it.ascii, 'UP')}=${put(it)}`), ' TZ=UTC');
  } },
  { id: 'vault-kv', named: true, labels: ['vault kv get secret/app/prod', 'vault kv get -mount=kv payments/api'], max: 4, ok: line, render(r, its, put) {
    const rows = its.map((it) => `${sty(it.name, 'snake').padEnd(24)} ${put(it)}`);
    return lines('====== Secret Path ======', 'secret/data/app/prod', '', '======= Metadata =======', 'Key                Value', '---                -----', `created_time       ${iso(r)}`, 'custom_metadata    <nil>', 'deletion_time      n/a', 'destroyed          false', `version            ${r.int(1, 30)}`, '', '====== Data ======', 'Key                      Value', '---                      -----', ...rows);
  } },
  { id: 'vault-token-create', labels: ['vault token create -policy=deploy', 'vault login -method=oidc'], max: 1, ok: isK('vault-token', 'vault-batch-token'), render(r, its, put) {
    return lines('Key                  Value', '---                  -----', ...its.map((it) => `token                ${put(it)}`), `token_accessor       ${r.s(AN, 24)}`, 'token_duration       768h', 'token_renewable      true', 'token_policies       ["default" "deploy"]', 'identity_policies    []', 'policies             ["default" "deploy"]');
  } },
  { id: 'nuget-config', labels: ['read NuGet.Config', 'cat ~/.nuget/NuGet/NuGet.Config'], max: 3, ok: isK('generic-password', 'generic-token', 'github-pat', 'github-fine-grained-pat', 'gitlab-pat', 'artifactory-api-key'), render(r, its, put) {
    return lines('<?xml version="1.0" encoding="utf-8"?>', '<configuration>', '  <packageSources>', '    <add key="internal" value="https://pkgs.example.net/nuget/v3/index.json" />', '  </packageSources>', '  <packageSourceCredentials>', ...its.flatMap((it, i) => [`    <feed${i}>`, `      <add key="Username" value="${r.pick(USERS)}" />`, `      <add key="ClearTextPassword" value="${put(it)}" />`, `    </feed${i}>`]), '  </packageSourceCredentials>', '</configuration>');
  } },
  { id: 'maven-settings', labels: ['cat ~/.m2/settings.xml'], max: 3, ok: isK('generic-password', 'generic-token', 'github-pat', 'github-fine-grained-pat', 'gitlab-pat', 'artifactory-api-key'), render(r, its, put) {
    return lines('<settings>', '  <servers>', ...its.flatMap((it, i) => ['    <server>', `      <id>repo-${i}</id>`, `      <username>${r.pick(USERS)}</username>`, `      <password>${put(it)}</password>`, '    </server>']), '  </servers>', '  <mirrors><mirror><id>central</id><url>https://repo.example.net/maven2</url><mirrorOf>*</mirrorOf></mirror></mirrors>', '</settings>');
  } },
  { id: 'sql', labels: ['cat migrations/0042_users.sql', 'read db/seed.sql'], max: 3, ok: isK('generic-password'), render(r, its, put) {
    return lines('BEGIN;', ...its.flatMap((it) => { const u = r.pick(USERS).replace('-', '_'); return r.chance(0.5) ? [`CREATE USER ${u} WITH PASSWORD '${put(it)}';`, `GRANT CONNECT ON DATABASE app TO ${u};`] : [`CREATE USER '${u}'@'%' IDENTIFIED BY '${put(it)}';`, `GRANT SELECT ON app.* TO '${u}'@'%';`]; }), 'COMMIT;');
  } },
  // ---- specific files
  { id: 'aws-credentials', labels: ['cat ~/.aws/credentials', 'read /home/dev/.aws/credentials'], max: 6, ok: pre('aws-'), render(r, its, put) {
    const by = (k: string): Item[] => its.filter((i) => i.kind === k);
    const ids = by('aws-access-key-id'); const secs = by('aws-secret-key'); const toks = by('aws-session-token');
    const out: string[] = [];
    for (let i = 0; i < Math.max(ids.length, secs.length, toks.length); i++) {
      out.push(`[${i === 0 ? 'default' : r.pick(['prod', 'staging', 'ci', 'backup']) + '-' + i}]`);
      const a = ids[i]; const b = secs[i]; const c = toks[i];
      if (a) out.push(`aws_access_key_id = ${put(a)}`);
      if (b) out.push(`aws_secret_access_key = ${put(b)}`);
      if (c) out.push(`aws_session_token = ${put(c)}`);
      if (r.chance(0.4)) out.push(`region = ${r.pick(['eu-west-1', 'us-east-1'])}`);
      out.push('');
    }
    return lines(...out);
  } },
  { id: 'aws-export-credentials', labels: ['aws configure export-credentials --profile prod', 'bash: for p in prod ci; do aws configure export-credentials --profile $p; done'], max: 3, ok: pre('aws-'), render(r, its, put) {
    const names: Record<string, string> = { 'aws-access-key-id': 'AccessKeyId', 'aws-secret-key': 'SecretAccessKey', 'aws-session-token': 'SessionToken' };
    const env: Record<string, string> = { 'aws-access-key-id': 'AWS_ACCESS_KEY_ID', 'aws-secret-key': 'AWS_SECRET_ACCESS_KEY', 'aws-session-token': 'AWS_SESSION_TOKEN' };
    const profiles: Item[][] = [];
    for (const it of its) { const p = profiles.find((g) => !g.some((x) => x.kind === it.kind)); if (p) p.push(it); else profiles.push([it]); }
    const asEnv = r.chance(0.4);
    return profiles.map((g) => {
      if (asEnv) return lines(...g.map((it) => `export ${env[it.kind]}=${put(it)}`), `export AWS_CREDENTIAL_EXPIRATION=${iso(r)}`);
      const o: Record<string, unknown> = { Version: 1 }; for (const it of g) o[names[it.kind] as string] = put(it); o['Expiration'] = iso(r);
      return JSON.stringify(o, null, 4) + '\n';
    }).join('');
  } },
  { id: 'pypirc', labels: ['cat ~/.pypirc'], max: 2, ok: isK('pypi-token'), render(r, its, put) {
    return lines('[distutils]', 'index-servers =', '    pypi', '    testpypi', '', ...its.flatMap((it, i) => [i === 0 ? '[pypi]' : '[testpypi]', i === 0 ? 'repository = https://upload.pypi.org/legacy/' : 'repository = https://test.pypi.org/legacy/', 'username = __token__', `password = ${put(it)}`, '']));
  } },
  { id: 'npmrc', labels: ['cat ~/.npmrc', 'read .npmrc'], max: 3, ok: isK('npm-token', 'github-pat', 'github-fine-grained-pat', 'gitlab-pat', 'artifactory-api-key'), render(r, its, put) {
    const reg: Record<string, string> = { 'npm-token': '//registry.npmjs.org/', 'gitlab-pat': `//gitlab.com/api/v4/projects/${r.int(1000, 99999)}/packages/npm/`, 'artifactory-api-key': '//acme.jfrog.io/artifactory/api/npm/npm-virtual/' };
    return lines('registry=https://registry.npmjs.org/', '@acme:registry=https://npm.pkg.github.com', ...its.map((it) => `${reg[it.kind] ?? '//npm.pkg.github.com/'}:_authToken=${put(it)}`), 'save-exact=true', 'fund=false');
  } },
  { id: 'cargo-credentials', labels: ['cat ~/.cargo/credentials.toml'], max: 2, ok: isK('crates-io-token'), render(_r, its, put) {
    return lines(...its.flatMap((it, i) => (i === 0 ? ['[registry]', `token = "${put(it)}"`, ''] : ['[registries.internal]', `token = "${put(it)}"`])));
  } },
  { id: 'gh-hosts', labels: ['cat ~/.config/gh/hosts.yml'], max: 2, ok: isK('github-oauth-token', 'github-pat'), render(r, its, put) {
    return lines(...its.flatMap((it, i) => { const u = r.pick(['octodev', 'dlee-acme', 'ops-bot']); const v = put(it); return [i === 0 ? 'github.com:' : 'github.acme-corp.com:', '    users:', `        ${u}:`, `            oauth_token: ${v}`, '    git_protocol: https', `    oauth_token: ${v}`, `    user: ${u}`]; }));
  } },
  { id: 'git-credentials', labels: ['cat ~/.git-credentials'], max: 4, ok: (it) => pre('github-', 'gitlab-pat', 'gitlab-deploy')(it) || it.kind === 'generic-password', render(r, its, put) {
    return lines(...its.map((it) => { const e = enc(it.value); const h = it.kind.startsWith('gitlab') ? 'gitlab.com' : it.kind === 'generic-password' ? 'bitbucket.org' : 'github.com'; return `https://${r.pick(['octodev', 'oauth2', 'x-access-token', 'dlee'])}:${put(it, e.text, e.pieces)}@${h}`; }));
  } },
  { id: 'git-remote', labels: ['git remote -v', 'git config --get-regexp remote'], max: 2, ok: pre('github-pat', 'github-fine', 'github-app', 'gitlab-pat', 'gitlab-deploy'), render(r, its, put) {
    return lines(...its.flatMap((it, i) => { const u = `https://${it.kind.startsWith('github-app') ? 'x-access-token' : 'oauth2'}:${put(it)}@${it.kind.startsWith('gitlab') ? 'gitlab.com' : 'github.com'}/acme/${r.pick(WORDS)}.git`; const n = i === 0 ? 'origin' : 'upstream'; return [`${n}\t${u} (fetch)`, `${n}\t${u} (push)`]; }));
  } },
  { id: 'gitconfig', labels: ['cat ~/.gitconfig', 'read .git/config'], max: 2, ok: pre('github-pat', 'github-fine', 'gitlab-pat'), render(_r, its, put) {
    return lines('[user]', '\tname = Dana Lee', '\temail = dana@example.net', '[core]', '\teditor = vim', '\tautocrlf = input', ...its.flatMap((it) => { const h = it.kind.startsWith('gitlab') ? 'gitlab.com' : 'github.com'; return [`[url "https://oauth2:${put(it)}@${h}/"]`, `\tinsteadOf = https://${h}/`]; }), '[pull]', '\trebase = true');
  } },
  { id: 'netrc', labels: ['cat ~/.netrc', 'read /root/.netrc'], max: 4, ok: isK('generic-password', 'generic-token', 'github-pat', 'heroku-api-key', 'gitlab-pat'), render(r, its, put) {
    const hostOf: Record<string, string> = { 'heroku-api-key': 'api.heroku.com', 'github-pat': 'github.com', 'gitlab-pat': 'gitlab.com' };
    return lines(...its.flatMap((it) => { const h = hostOf[it.kind] ?? host(r); const u = it.kind === 'heroku-api-key' ? 'dev@example.net' : r.pick(USERS); return r.chance(0.5) ? [`machine ${h} login ${u} password ${put(it)}`] : [`machine ${h}`, `  login ${u}`, `  password ${put(it)}`]; }));
  } },
  { id: 'pgpass', labels: ['cat ~/.pgpass'], max: 4, ok: isK('generic-password', 'planetscale-password'), render(r, its, put) {
    return lines(...its.map((it) => `${r.pick([host(r), 'localhost', '*'])}:${r.pick(['5432', '*', '6432'])}:${r.pick(['app', '*', 'analytics'])}:${r.pick(USERS)}:${put(it)}`));
  } },
  { id: 'docker-config', labels: ['cat ~/.docker/config.json'], max: 3, ok: (it) => it.shape === 'docker', render(r, its, put) {
    const auths: Record<string, { auth: string }> = {}; const regs = ['https://index.docker.io/v1/', 'ghcr.io', 'registry.gitlab.com', `${r.int(100000000000, 999999999999)}.dkr.ecr.eu-west-1.amazonaws.com`];
    its.forEach((it, i) => { auths[regs[i] as string] = { auth: put(it) }; });
    return JSON.stringify({ auths, HttpHeaders: { 'User-Agent': 'Docker-Client/24.0.7 (linux)' }, currentContext: 'default' }, null, '\t') + '\n';
  } },
  { id: 'k8s-dockerconfigjson', labels: ['cat k8s/regcred.yaml', 'read deploy/pull-secret.yaml'], max: 2, ok: (it) => it.shape === 'docker', render(r, its, put) {
    const auths: Record<string, { auth: string }> = {}; its.forEach((it, i) => { auths[i === 0 ? 'registry.example.net' : 'ghcr.io'] = { auth: put(it) }; });
    return lines('apiVersion: v1', 'kind: Secret', 'metadata:', '  name: regcred', `  namespace: ${r.pick(['prod', 'ci'])}`, 'type: kubernetes.io/dockerconfigjson', 'stringData:', `  .dockerconfigjson: '${JSON.stringify({ auths })}'`);
  } },
  { id: 'cli-history', labels: ['cat ~/.bash_history', 'read ~/.zsh_history', 'history 40'], max: 4, ok: (it) => line(it) && !!it.cli, render(r, its, put) {
    const out = ['cd ~/work', 'git pull --rebase', 'make build'];
    for (const it of its) out.splice(r.int(0, out.length), 0, fill(it.cli as string, shq(put(it)), r));
    return lines(...out);
  } },
  { id: 'curl-history', labels: ['cat ~/.bash_history', 'read ~/.zsh_history'], max: 4, ok: (it) => line(it) && (!!it.header || !!it.user), render(r, its, put) {
    const out = ['ls', 'jq . response.json | less'];
    for (const it of its) {
      const path = `https://${apiHost(it)}/v1/${r.pick(WORDS)}`;
      if (it.user && (!it.header || r.chance(0.5))) { const v = put(it); const u = it.user === 'VALUE:' ? `${v}:` : `${fill(it.user, '', r)}:${v}`; out.push(`curl -sS -u ${shq(u)} ${it.user === '{AC}' ? 'https://api.twilio.com/2010-04-01/Accounts.json' : path}`); }
      else out.push(`curl -sS ${r.pick(['-H', '--header'])} ${r.chance(0.5) ? `'${(put(it), hdr(it))}'` : `"${(put(it), hdr(it))}"`} ${path}${r.chance(0.4) ? ' | jq .' : ''}`);
    }
    return lines(...out, 'clear');
  } },
  { id: 'http-dump', labels: ['curl -v'], max: 2, ok: (it) => line(it) && !!it.header, labelFor: (it, r) => `curl -v ${r.pick(['', '-sS '])}https://${apiHost(it)}/`, render(r, its, put) {
    const out: string[] = [];
    for (const it of its) { const h = apiHost(it); out.push(`*   Trying ${ip(r)}:443...`, `* Connected to ${h} port 443`, '* ALPN: curl offers h2,http/1.1', '* SSL connection using TLSv1.3 / TLS_AES_128_GCM_SHA256', `> GET /v1/${r.pick(WORDS)} HTTP/2`, `> Host: ${h}`, '> User-Agent: curl/8.5.0', '> Accept: */*', `> ${(put(it), hdr(it))}`, '>', '< HTTP/2 200', '< content-type: application/json', `< x-request-id: ${uuid(r)}`, '<', `{"ok":true,"id":"${r.s(L + D, 10)}"}`, `* Connection #0 to host ${h} left intact`); }
    return lines(...out);
  } },
  { id: 'url-encoded', labels: ['read logs/waf-audit.log', 'grep -r Authorization logs/proxy/'], max: 3, ok: (it) => line(it) && it.plain && (!!it.header || it.kind === 'generic-password'), render(r, its, put) {
    const out = [`${iso(r)} waf rule=920350 action=pass uri=%2Fv1%2Fhealth`];
    for (const it of its) {
      const e = encodeURIComponent(it.value); const pieces = e === it.value ? undefined : [e];
      if (!it.header) out.push(`${iso(r)} waf rule=942100 action=log uri=%2Flogin args=username%3D${r.pick(USERS)}%26password%3D${put(it, e, pieces)}%26remember%3D1`);
      else out.push(`${iso(r)} proxy dump req=${uuid(r)} headers=Host%3A%20${apiHost(it)}%0D%0A${encodeURIComponent((it.header.split('{}')[0]) as string)}${put(it, e, pieces)}%0D%0AAccept%3A%20*%2F*`);
    }
    return lines(...out, `${iso(r)} waf rule=913100 action=pass uri=%2Fsearch%3Fq%3Dshoes`);
  } },
  { id: 'query-log', labels: ['tail -n 50 /var/log/nginx/access.log', 'read logs/access.log'], max: 3, ok: (it) => line(it) && !!it.query, render(r, its, put) {
    const ln = (q: string): string => `${ip(r)} - - [1${r.int(0, 9)}/May/2024:1${r.int(0, 9)}:${r.int(10, 59)}:${r.int(10, 59)} +0000] "GET ${q} HTTP/1.1" 200 ${r.int(200, 9000)} "-" "${r.pick(['python-requests/2.31.0', 'Mozilla/5.0', 'okhttp/4.12.0'])}"`;
    const out = [ln(`/v1/${r.pick(WORDS)}?page=${r.int(1, 9)}`), ln('/healthz')];
    for (const it of its) { const e = encodeURIComponent(it.value); out.splice(r.int(0, out.length), 0, ln(`/v1/${r.pick(WORDS)}?${it.query}=${put(it, e, e === it.value ? undefined : [e])}&page=${r.int(2, 9)}`)); }
    return lines(...out);
  } },
  { id: 'telegram-url', labels: ['kubectl logs deploy/notifier', 'cat bot/notify.py'], max: 2, ok: isK('telegram-bot-token'), render(r, its, put) {
    if (r.chance(0.5)) return lines(...its.flatMap((it) => [`${iso(r)} INFO notifier: POST https://api.telegram.org/bot${put(it)}/sendMessage chat_id=-100${r.s(D, 10)} status=200`, `${iso(r)} INFO notifier: GET https://api.telegram.org/bot${put(it)}/getUpdates?offset=${r.int(1000, 99999)} status=200`]));
    return lines('import requests', '', ...its.map((it) => `URL = "https://api.telegram.org/bot${put(it)}/sendMessage"`), '', 'def notify(chat_id: int, text: str) -> None:', '    requests.post(URL, json={"chat_id": chat_id, "text": text}, timeout=10)');
  } },
  { id: 'py-sdk', labels: ['cat app/clients.py', 'read scripts/send_report.py'], max: 3, ok: (it) => line(it) && !!it.py, render(r, its, put) {
    return lines('import os', 'import logging', '', 'log = logging.getLogger(__name__)', '', ...its.map((it) => fill(it.py as string, put(it), r)), '', 'def main() -> None:', '    log.info("clients ready")');
  } },
  { id: 'js-sdk', labels: ['cat src/lib/clients.ts', 'read server/index.js'], max: 3, ok: (it) => line(it) && !!it.js, render(r, its, put) {
    return lines("import express from 'express';", '', 'const app = express();', ...its.map((it) => fill(it.js as string, put(it), r)), '', `app.listen(${r.int(3000, 9000)});`);
  } },
  { id: 'py-implicit-join', labels: ['cat app/legacy_client.py', 'read tools/sync.py'], max: 2, ok: (it) => line(it) && it.plain && it.value.length >= 24, render(r, its, put) {
    return lines('import requests', '', ...its.flatMap((it) => { const c = Math.floor(it.value.length / 2) + r.int(-3, 3); const a = it.value.slice(0, c); const b = it.value.slice(c); put(it, '', [a, b]); return [`${sty(it.ascii, 'UP')} = (`, `    "${a}"`, `    "${b}"`, ')', '']; }), 'session = requests.Session()');
  } },
  { id: 'py-backslash-continuation', labels: ['cat app/integrations.py', 'read scripts/backfill.py'], max: 2, ok: (it) => line(it) && it.plain && it.value.length >= 24, render(r, its, put) {
    return lines('import os', '', ...its.flatMap((it) => { const c = Math.floor(it.value.length / 2) + r.int(-3, 3); const a = it.value.slice(0, c); const b = it.value.slice(c); put(it, '', [a, b]); return [`${sty(it.ascii, 'UP')} = os.environ.get(${JSON.stringify(sty(it.ascii, 'UP'))}, "${a}\\`, `${b}")`, '']; }), 'TIMEOUT = 30');
  } },
  { id: 'shell-continuation', labels: ['cat scripts/deploy.sh', 'read ~/.bash_history'], max: 2, ok: (it) => line(it) && it.plain && it.value.length >= 24, render(r, its, put) {
    return lines('#!/usr/bin/env bash', 'set -euo pipefail', ...its.flatMap((it) => { const c = Math.floor(it.value.length / 2) + r.int(-3, 3); const a = it.value.slice(0, c); const b = it.value.slice(c); put(it, '', [a, b]); return it.header && r.chance(0.6) ? [`curl -sS https://${apiHost(it)}/v1/${r.pick(WORDS)} \\`, `  -H "${(it.header.split('{}')[0]) as string}${a}\\`, `${b}" \\`, '  -o out.json'] : [`export ${sty(it.ascii, 'UP')}=${a}\\`, `${b}`]; }), 'echo "ok"');
  } },
  // ---- key material
  { id: 'pem-file', labels: ['cat ~/.ssh/id_rsa'], max: 1, ok: (it) => it.shape === 'pem', labelFor: (it, r) => r.pick(({ 'private-key-rsa': ['cat ~/.ssh/id_rsa', 'read certs/server.key'], 'private-key-ec': ['cat /etc/ssl/private/api-ec.key', 'read tls/tls.key'], 'private-key-openssh': ['cat ~/.ssh/id_ed25519', 'read deploy/deploy_key'], 'private-key-pkcs8': ['read config/jwt/private.pem', 'cat key.pem'], 'private-key-pgp': ['gpg --export-secret-keys --armor ops@example.net'] } as Record<string, string[]>)[it.kind] ?? ['cat key.pem']),
    render(_r, its, put) { const it = its[0] as Item; return fullPem(it.kind, put(it)); } },
  { id: 'pem-dotenv', labels: ['cat .env', 'read .env.production'], max: 1, ok: (it) => it.shape === 'pem' && it.kind !== 'private-key-pgp', render(r, its, put) {
    const it = its[0] as Item; const l = pemLabel(it.kind);
    return lines('NODE_ENV=production', `GITHUB_APP_ID=${r.int(100000, 999999)}`, `${sty(it.ascii, 'UP')}="-----BEGIN ${l}-----`, put(it), `-----END ${l}-----"`, 'WEBHOOK_PATH=/api/github/webhooks');
  } },
  { id: 'pem-json-escaped', labels: ['cat config/github-app.json', 'read secrets/signing.json'], max: 1, ok: (it) => it.shape === 'pem', render(r, its, put) {
    const it = its[0] as Item; const esc = it.value.split('\n').join('\\n'); put(it, '', [esc]);
    return JSON.stringify({ appId: r.int(100000, 999999), installationId: r.int(10000000, 99999999), [sty(it.ascii, 'camel')]: fullPem(it.kind, it.value), webhookPath: '/api/github/webhooks' }, null, 2) + '\n';
  } },
  { id: 'pem-yaml-block', labels: ['cat charts/ingress/values.yaml', 'helm get values ingress -n edge'], max: 1, ok: (it) => it.shape === 'pem', render(r, its, put) {
    const it = its[0] as Item; const body = it.value.split('\n'); put(it, '', body.filter((x) => x.length > 0)); const l = pemLabel(it.kind);
    return lines('tls:', '  enabled: true', `  secretName: ${r.pick(WORDS)}-tls`, '  privateKey: |', `    -----BEGIN ${l}-----`, ...body.map((b) => '    ' + b), `    -----END ${l}-----`, '  certificate: ""');
  } },
  { id: 'tfstate', labels: ['cat terraform.tfstate', 'terraform show -json', 'read infra/.terraform/terraform.tfstate'], max: 4, ok: (it) => isK('generic-password', 'generic-secret', 'aws-access-key-id', 'aws-secret-key', 'datadog-api-key')(it) || (it.shape === 'pem' && it.kind !== 'private-key-pgp'), render(r, its, put) {
    const resources = its.map((it) => {
      let type = 'random_password'; let attributes: Record<string, unknown>;
      if (it.shape === 'pem') { type = 'tls_private_key'; put(it, '', [it.value.split('\n').join('\\n')]); attributes = { algorithm: it.kind === 'private-key-ec' ? 'ECDSA' : it.kind === 'private-key-openssh' ? 'ED25519' : 'RSA', [it.kind === 'private-key-openssh' ? 'private_key_openssh' : it.kind === 'private-key-pkcs8' ? 'private_key_pem_pkcs8' : 'private_key_pem']: fullPem(it.kind, it.value), public_key_fingerprint_md5: Array.from({ length: 16 }, () => r.s(HEX, 2)).join(':') }; }
      else if (it.kind === 'generic-password' && r.chance(0.5)) { type = 'aws_db_instance'; attributes = { identifier: `${r.pick(WORDS)}-db`, engine: 'postgres', username: 'app', password: put(it), port: 5432 }; }
      else if (it.kind === 'generic-secret') { type = 'aws_secretsmanager_secret_version'; attributes = { secret_id: `arn:aws:secretsmanager:eu-west-1:${r.s(D, 12)}:secret:app-${r.s(AN, 6)}`, secret_string: put(it), version_stages: ['AWSCURRENT'] }; }
      else if (it.kind === 'aws-access-key-id') { type = 'aws_iam_access_key'; attributes = { id: put(it), user: 'ci-deployer', status: 'Active' }; }
      else if (it.kind === 'aws-secret-key') { type = 'aws_iam_access_key'; attributes = { user: 'ci-deployer', secret: put(it), status: 'Active' }; }
      else if (it.kind === 'datadog-api-key') { type = 'datadog_api_key'; attributes = { name: 'terraform', key: put(it) }; }
      else attributes = { id: 'none', length: 32, special: true, result: put(it) };
      return { mode: 'managed', type, name: r.pick(['main', 'this', 'app']), provider: 'provider["registry.terraform.io/hashicorp/aws"]', instances: [{ schema_version: 0, attributes, sensitive_attributes: [] }] };
    });
    return JSON.stringify({ version: 4, terraform_version: '1.7.5', serial: r.int(1, 400), lineage: uuid(r), outputs: {}, resources, check_results: null }, null, 2) + '\n';
  } },
  { id: 'kubeconfig', labels: ['kubectl config view --raw', 'cat ~/.kube/config', 'read /home/dev/.kube/config'], max: 2, ok: (it) => it.shape === 'kcfg' || isK('jwt', 'openshift-token')(it), render(r, its, put) {
    const ca = b64(`-----BEGIN CERTIFICATE-----\n${wrapLines('MIIC' + r.s(B64, 1000), 64).join('\n')}\n-----END CERTIFICATE-----\n`);
    const users = its.flatMap((it, i) => [`- name: user-${i}`, '  user:', ...(it.shape === 'kcfg' ? [`    client-certificate-data: ${b64('-----BEGIN CERTIFICATE-----\n' + wrapLines('MIID' + r.s(B64, 1100), 64).join('\n') + '\n-----END CERTIFICATE-----\n')}`, `    client-key-data: ${put(it)}`] : [`    token: ${put(it)}`])]);
    return lines('apiVersion: v1', 'clusters:', '- cluster:', `    certificate-authority-data: ${ca}`, `    server: https://${ip(r)}:6443`, '  name: prod', 'contexts:', '- context:', '    cluster: prod', '    user: user-0', '  name: prod', 'current-context: prod', 'kind: Config', 'preferences: {}', 'users:', ...users);
  } },
  { id: 'gcp-service-account', labels: ['cat service-account.json', 'read ~/.config/gcloud/legacy_credentials/deployer/adc.json', 'cat credentials/gcp-sa.json'], max: 1, ok: (it) => it.shape === 'gsa', render(r, its, put) {
    const it = its[0] as Item; const proj = `${r.pick(WORDS)}-prod-${r.s(D, 6)}`; const em = `deployer@${proj}.iam.gserviceaccount.com`;
    return lines('{', '  "type": "service_account",', `  "project_id": "${proj}",`, `  "private_key_id": "${r.s(HEX, 40)}",`, `  "private_key": "-----BEGIN PRIVATE KEY-----\\n${put(it)}\\n-----END PRIVATE KEY-----\\n",`, `  "client_email": "${em}",`, `  "client_id": "${digits(r, 21)}",`, '  "auth_uri": "https://accounts.google.com/o/oauth2/auth",', '  "token_uri": "https://oauth2.googleapis.com/token",', '  "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",', `  "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(em)}",`, '  "universe_domain": "googleapis.com"', '}');
  } },
  { id: 'gcp-sa-k8s-secret', labels: ['cat k8s/gcp-credentials.yaml'], max: 1, ok: (it) => it.shape === 'gsa', render(r, its, put) {
    const it = its[0] as Item; const proj = `${r.pick(WORDS)}-prod-${r.s(D, 6)}`;
    return lines('apiVersion: v1', 'kind: Secret', 'metadata:', '  name: gcp-sa', 'type: Opaque', 'stringData:', '  key.json: |', '    {', '      "type": "service_account",', `      "project_id": "${proj}",`, `      "private_key_id": "${r.s(HEX, 40)}",`, `      "private_key": "-----BEGIN PRIVATE KEY-----\\n${put(it)}\\n-----END PRIVATE KEY-----\\n",`, `      "client_email": "runner@${proj}.iam.gserviceaccount.com",`, '      "token_uri": "https://oauth2.googleapis.com/token"', '    }');
  } },
  { id: 'gcp-oauth-json', labels: ['cat ~/.config/gcloud/application_default_credentials.json', 'read client_secret.json'], max: 2, ok: isK('google-oauth-client-secret', 'google-refresh-token'), render(r, its, put) {
    const cid = `${digits(r, 12)}-${r.s(L + D, 32)}.apps.googleusercontent.com`;
    const secs = its.filter((i) => i.kind === 'google-oauth-client-secret'); const refs = its.filter((i) => i.kind === 'google-refresh-token');
    const docs: string[] = [];
    for (const ref of refs) { const sec = secs.shift(); docs.push(JSON.stringify({ account: '', client_id: cid, ...(sec ? { client_secret: put(sec) } : {}), quota_project_id: `${r.pick(WORDS)}-dev`, refresh_token: put(ref), type: 'authorized_user', universe_domain: 'googleapis.com' }, null, 2)); }
    for (const sec of secs) docs.push(JSON.stringify({ installed: { client_id: cid, project_id: `${r.pick(WORDS)}-dev`, auth_uri: 'https://accounts.google.com/o/oauth2/auth', token_uri: 'https://oauth2.googleapis.com/token', auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs', client_secret: put(sec), redirect_uris: ['http://localhost'] } }));
    return docs.join('\n') + '\n';
  } },
  { id: 'raw-command-output', labels: ['cat token'], max: 1, ok: isK('vault-token', 'huggingface-token', 'github-oauth-token', 'heroku-api-key', 'google-oauth-access-token', 'generic-password', 'generic-token', 'jwt', 'doppler-token'), labelFor: (it, r) => r.pick(({ 'vault-token': ['cat ~/.vault-token'], 'huggingface-token': ['cat ~/.cache/huggingface/token'], 'github-oauth-token': ['gh auth token'], 'heroku-api-key': ['heroku auth:token'], 'google-oauth-access-token': ['gcloud auth print-access-token', 'gcloud auth application-default print-access-token'], 'generic-password': ['security find-generic-password -s deploy-db -w', 'op read op://Prod/postgres/password', 'kubectl get secret db -o jsonpath={.data.password} | base64 -d'], 'generic-token': ['op read op://Infra/api/credential', 'pass show ci/token'], jwt: ['kubectl create token ci-bot -n build'], 'doppler-token': ['doppler configure get token --plain'] } as Record<string, string[]>)[it.kind] ?? ['cat token']),
    render(r, its, put) { const it = its[0] as Item; return (it.kind === 'heroku-api-key' && r.chance(0.5) ? ' ›   Warning: token will expire 05/31/2025\n' : '') + put(it) + '\n'; } },
];

// ---------------------------------------------------------------- assembly
export function outsideCorpus(seed: number): Corpus {
  const r = rng(seed * 7919 + 17);
  const items: Item[] = [];
  for (const sp of SPECS) { const n = 12 + r.int(0, 3); const off = r.int(0, 50); for (let i = 0; i < n; i++) items.push(makeItem(r, sp, off + i)); }
  r.shuffle(items);
  const used = new Array<boolean>(items.length).fill(false);
  const outputs: Corpus['outputs'] = []; const planted: Planted[] = [];
  // a non-ASCII key name (パスワード, contraseña…) only goes where the renderer prints the name
  const fits = (rd: Renderer, it: Item): boolean => rd.ok(it) && (it.name === it.ascii || rd.named === true);
  const emit = (rd: Renderer, headIdx: number): void => {
    const head = items[headIdx] as Item; used[headIdx] = true;
    const group = [head]; const want = r.int(1, rd.max);
    for (let j = 0; j < items.length && group.length < want; j++) { const c = items[(headIdx + 1 + j) % items.length] as Item; if (!used[(headIdx + 1 + j) % items.length] && fits(rd, c)) { used[(headIdx + 1 + j) % items.length] = true; group.push(c); } }
    const done = new Set<Item>();
    const put: Put = (it, shown, pieces) => {
      if (!done.has(it)) { done.add(it); const p = pieces ?? it.pieces; planted.push({ kind: it.kind, value: it.value, surrounding: rd.id, source: it.source, ...(p ? { appearsAs: p } : {}), output: outputs.length }); }
      return shown ?? it.display;
    };
    const text = rd.render(r, group, put);
    for (const it of group) if (!done.has(it)) throw new Error(`renderer ${rd.id} did not place ${it.kind}`);
    outputs.push({ surrounding: rd.id, text, label: rd.labelFor ? rd.labelFor(head, r) : r.pick(rd.labels) });
  };
  for (const rd of RENDERERS) { // every surrounding at least once per seed
    const free = items.map((it, i) => (!used[i] && fits(rd, it) ? i : -1)).filter((i) => i >= 0);
    if (free.length > 0) emit(rd, r.pick(free));
  }
  for (let i = 0; i < items.length; i++) if (!used[i]) { const it = items[i] as Item; emit(r.pick(RENDERERS.filter((x) => fits(x, it))), i); }
  return { outputs, planted };
}

export function surroundings(): string[] { return RENDERERS.map((x) => x.id); }

// ---------------------------------------------------------------- conventions
export function secretPaths(): { path: string; source: string }[] {
  const P = (path: string, source: string): { path: string; source: string } => ({ path, source });
  return [
    P('/home/dev/.aws/credentials', 'AWS CLI docs: shared credentials file'), P('~/.aws/config', 'AWS CLI docs: config file (credential_process, sso)'),
    P('~/.kube/config', 'Kubernetes docs: kubeconfig'), P('/var/run/secrets/kubernetes.io/serviceaccount/token', 'Kubernetes docs: service account token volume'),
    P('~/.docker/config.json', 'Docker docs: docker login credential storage'), P('~/.git-credentials', 'git-credential-store docs'),
    P('.git/config', 'git-config docs (remote URLs may embed credentials)'), P('~/.gitconfig', 'git-config docs (url.<base>.insteadOf)'),
    P('.env', 'dotenv convention (motdotla/dotenv)'), P('.env.local', 'Next.js docs: environment variable files'), P('.env.production', 'Next.js / Vite docs: mode env files'),
    P('.envrc', 'direnv docs'), P('~/.config/gcloud/application_default_credentials.json', 'Google Cloud docs: Application Default Credentials'),
    P('service-account.json', 'Google Cloud docs: service account keys'), P('~/.config/gcloud/credentials.db', 'Google Cloud SDK credential store'),
    P('terraform.tfstate', 'Terraform docs: sensitive data in state'), P('prod.tfvars', 'Terraform docs: variable definition files'), P('terraform.tfvars', 'Terraform docs: variable definition files'),
    P('~/.terraform.d/credentials.tfrc.json', 'Terraform CLI docs: terraform login'), P('~/.config/gh/hosts.yml', 'GitHub CLI: stored oauth_token'),
    P('~/.vault-token', 'HashiCorp Vault docs: token helper file'), P('~/.pypirc', 'PyPA docs: .pypirc'), P('~/.cache/huggingface/token', 'Hugging Face Hub docs: token location'),
    P('~/.netrc', 'GNU inetutils / curl --netrc docs'), P('~/.pgpass', 'PostgreSQL libpq docs: password file'), P('~/.my.cnf', 'MySQL docs: option files'),
    P('~/.ssh/id_rsa', 'OpenSSH ssh-keygen docs'), P('~/.ssh/id_ed25519', 'OpenSSH ssh-keygen docs'), P('~/.ssh/id_ecdsa', 'OpenSSH ssh-keygen docs'),
    P('certs/server.key', 'OpenSSL / TLS convention; gitleaks rule private-key'), P('tls/private.pem', 'gitleaks rule private-key (*.pem)'),
    P('keystore.p12', 'gitleaks rule pkcs12-file'), P('client.pfx', 'gitleaks rule pkcs12-file'), P('deploy.ppk', 'PuTTY private key files'),
    P('~/.npmrc', 'npm docs: npmrc _authToken'), P('.npmrc', 'npm docs: per-project npmrc'), P('~/.yarnrc.yml', 'Yarn docs: npmAuthToken'),
    P('~/.cargo/credentials.toml', 'Cargo book: credentials'), P('~/.gem/credentials', 'RubyGems guides: API key'), P('~/.m2/settings.xml', 'Maven settings reference: servers'),
    P('~/.gradle/gradle.properties', 'Gradle docs: credentials in gradle.properties'), P('NuGet.Config', 'NuGet docs; gitleaks rule nuget-config-password'),
    P('~/.azure/msal_token_cache.json', 'Azure CLI token cache'), P('local.settings.json', 'Azure Functions docs: local settings'), P('appsettings.Production.json', 'ASP.NET Core configuration docs'),
    P('~/.databrickscfg', 'Databricks CLI docs: config profiles'), P('~/.pulumi/credentials.json', 'Pulumi docs: pulumi login'), P('~/.config/stripe/config.toml', 'Stripe CLI docs'),
    P('~/.fly/config.yml', 'flyctl access token'), P('~/.config/doppler/.doppler.yaml', 'Doppler CLI config'), P('~/.config/sops/age/keys.txt', 'SOPS docs: age key file'),
    P('~/.s3cfg', 's3cmd configuration'), P('~/.boto', 'gsutil boto configuration'), P('~/.config/rclone/rclone.conf', 'rclone docs: config file'),
    P('config/master.key', 'Rails guides: credentials'), P('config/database.yml', 'Rails guides: database configuration'), P('wp-config.php', 'WordPress docs: DB_PASSWORD'),
    P('~/.bash_history', 'bash HISTFILE (commands with inline secrets)'), P('~/.zsh_history', 'zsh HISTFILE'), P('~/.gnupg/private-keys-v1.d/', 'GnuPG docs: private key storage'),
  ];
}

export function secretCommands(): { command: string; source: string }[] {
  const C = (command: string, source: string): { command: string; source: string } => ({ command, source });
  return [
    C('printenv', 'coreutils printenv'), C('env', 'coreutils env'), C('set', 'bash builtin (prints variables)'), C('cat /proc/self/environ', 'proc(5)'),
    C('kubectl config view --raw', 'kubectl docs (--raw shows credentials)'), C('kubectl get secret app-secrets -o yaml', 'kubectl docs: managing secrets'),
    C("kubectl get secret db -o jsonpath='{.data.password}' | base64 -d", 'Kubernetes docs: decoding a secret'), C('kubectl create token ci-bot', 'kubectl docs: create token'),
    C('gcloud auth print-access-token', 'gcloud reference'), C('gcloud auth application-default print-access-token', 'gcloud reference'),
    C('aws configure export-credentials --format env', 'AWS CLI reference'), C('aws configure get aws_secret_access_key', 'AWS CLI reference'), C('aws sts get-session-token', 'AWS CLI reference'),
    C('cat ~/.aws/credentials', 'AWS CLI shared credentials file'), C('heroku auth:token', 'Heroku CLI reference'), C('gh auth token', 'GitHub CLI manual'), C('gh auth status --show-token', 'GitHub CLI manual'),
    C('vault kv get secret/app', 'Vault CLI docs'), C('vault read -field=password database/creds/app', 'Vault CLI docs'), C('vault token create', 'Vault CLI docs'),
    C('op read op://Prod/db/password', '1Password CLI docs'), C('op item get db --reveal', '1Password CLI docs'), C('security find-generic-password -s deploy -w', 'macOS security(1)'),
    C('az account get-access-token', 'Azure CLI reference'), C('doppler secrets download --no-file --format env', 'Doppler CLI docs'), C('terraform output -raw db_password', 'Terraform CLI docs'),
    C('terraform show -json', 'Terraform CLI docs (state incl. sensitive values)'), C('docker inspect api --format "{{json .Config.Env}}"', 'Docker CLI reference'), C('docker compose config', 'Docker Compose reference (resolves env)'),
    C('git credential fill', 'git-credential docs'), C('npm config get //registry.npmjs.org/:_authToken', 'npm config docs'), C('pass show ci/token', 'pass(1)'), C('heroku config -a api', 'Heroku CLI reference'),
  ];
}
