// A corpus of fake secrets in every format the guard withholds (issue 18),
// each inside the kind of output an agent reads: `.env` files, deploy logs,
// shell traces, JSON configs. Seeded, so every run measures the same text.
// None of these values is real.

/** A secret the corpus planted, with the kind its placeholder should name. */
export interface Planted {
  kind: string;
  value: string;
}

export interface Corpus {
  /** The outputs, as a tool would print them. */
  outputs: string[];
  planted: Planted[];
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const LOWER_DIGITS = "abcdefghijklmnopqrstuvwxyz0123456789";
const BASE64 = `${ALNUM}+/`;
const URLSAFE = `${ALNUM}-_`;
const HEX = "0123456789abcdef";

/** The formats, each a maker of one fake value from a random source. */
const FORMATS: { kind: string; make: (r: Random) => string }[] = [
  { kind: "aws-access-key", make: (r) => `AKIA${r.pick(UPPER_DIGITS, 16)}` },
  { kind: "aws-access-key", make: (r) => `ASIA${r.pick(UPPER_DIGITS, 16)}` },
  { kind: "aws-secret-key", make: (r) => r.pick(BASE64, 40) },
  { kind: "github-token", make: (r) => `ghp_${r.pick(ALNUM, 36)}` },
  { kind: "github-token", make: (r) => `gho_${r.pick(ALNUM, 36)}` },
  { kind: "github-token", make: (r) => `github_pat_${r.pick(ALNUM, 22)}_${r.pick(ALNUM, 59)}` },
  { kind: "gitlab-token", make: (r) => `glpat-${r.pick(URLSAFE, 20)}` },
  { kind: "slack-token", make: (r) => `xoxb-${r.pick("0123456789", 13)}-${r.pick("0123456789", 13)}-${r.pick(ALNUM, 24)}` },
  { kind: "slack-token", make: (r) => `xoxp-${r.pick("0123456789", 12)}-${r.pick("0123456789", 12)}-${r.pick("0123456789", 12)}-${r.pick(HEX, 32)}` },
  { kind: "slack-webhook", make: (r) => `https://hooks.slack.com/services/T${r.pick(UPPER_DIGITS, 10)}/B${r.pick(UPPER_DIGITS, 10)}/${r.pick(ALNUM, 24)}` },
  { kind: "stripe-key", make: (r) => `sk_live_${r.pick(ALNUM, 99).slice(0, 24 + r.int(60))}` },
  { kind: "stripe-key", make: (r) => `rk_test_${r.pick(ALNUM, 32)}` },
  { kind: "openai-key", make: (r) => `sk-proj-${r.pick(URLSAFE, 74)}T3BlbkFJ${r.pick(URLSAFE, 74)}` },
  { kind: "openai-key", make: (r) => `sk-${r.pick(ALNUM, 48)}` },
  { kind: "anthropic-key", make: (r) => `sk-ant-api03-${r.pick(URLSAFE, 93)}AA` },
  { kind: "google-api-key", make: (r) => `AIza${r.pick(URLSAFE, 35)}` },
  { kind: "npm-token", make: (r) => `npm_${r.pick(ALNUM, 36)}` },
  { kind: "jwt", make: (r) => `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ${r.pick(ALNUM, 60)}.${r.pick(URLSAFE, 43)}` },
  { kind: "authorization", make: (r) => r.pick(HEX, 40) },
  { kind: "url-credentials", make: (r) => `${r.pick(ALNUM, 8)}-${r.pick(ALNUM, 6)}` },
  { kind: "password", make: (r) => `${r.pick(ALNUM, 6)}!${r.pick(ALNUM, 4)}#${r.int(99)}` },
  { kind: "generic-secret", make: (r) => r.pick(LOWER_DIGITS, 32) },
  { kind: "private-key", make: (r) => privateKey(r, "RSA PRIVATE KEY") },
  { kind: "private-key", make: (r) => privateKey(r, "OPENSSH PRIVATE KEY") },
  { kind: "private-key", make: (r) => privateKey(r, "EC PRIVATE KEY") },
];

function privateKey(r: Random, label: string): string {
  const lines = Array.from({ length: 6 + r.int(20) }, () => r.pick(BASE64, 64));
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----`;
}

/** A line that places `value` the way its kind turns up in real output. */
function place(kind: string, value: string, _r: Random, i: number): string {
  const env = (name: string) =>
    [`${name}=${value}`, `export ${name}="${value}"`, `  "${name.toLowerCase()}": "${value}",`, `${name.toLowerCase()}: ${value}`][i % 4];
  switch (kind) {
    case "aws-access-key":
      return env("AWS_ACCESS_KEY_ID");
    case "aws-secret-key":
      return env("AWS_SECRET_ACCESS_KEY");
    case "github-token":
      return [env("GITHUB_TOKEN"), `+ git clone https://${value}@github.com/acme/infra.git`][i % 2];
    case "gitlab-token":
      return env("GITLAB_TOKEN");
    case "slack-token":
      return env("SLACK_BOT_TOKEN");
    case "slack-webhook":
      return [`SLACK_WEBHOOK_URL=${value}`, `2026-11-30 10:00:0${i % 10} INFO posting summary to ${value}`][i % 2];
    case "stripe-key":
      return env("STRIPE_SECRET_KEY");
    case "openai-key":
      return [env("OPENAI_API_KEY"), `client = OpenAI(api_key="${value}")`][i % 2];
    case "anthropic-key":
      return [env("ANTHROPIC_API_KEY"), `+ curl -s https://api.anthropic.com/v1/messages -H 'x-api-key: ${value}'`][i % 2];
    case "google-api-key":
      return [env("GOOGLE_API_KEY"), `GET https://maps.googleapis.com/maps/api/geocode/json?address=x&key=${value} 200`][i % 2];
    case "npm-token":
      return [`//registry.example.com/:_authToken=${value}`, env("NPM_TOKEN")][i % 2];
    case "jwt":
      return [`2026-11-30T10:02:0${i % 10}Z DEBUG > Authorization: Bearer ${value}`, `  "id_token": "${value}",`][i % 2];
    case "authorization":
      return [`> Authorization: Bearer ${value}`, `+ curl -H "Authorization: token ${value}" https://api.example.com/v1/me`, `Authorization: Basic ${value}`][
        i % 3
      ];
    case "url-credentials":
      return [
        `DATABASE_URL=postgres://app:${value}@db.internal:5432/app`,
        `2026-11-30 INFO connecting to redis://default:${value}@cache:6379/0`,
        `  "url": "mongodb+srv://svc:${value}@cluster0.example.net/prod",`,
      ][i % 3];
    case "password":
      return [env("DB_PASSWORD"), `  password: ${value}`, `mysql -u root --password=${value} app`][i % 3];
    case "generic-secret":
      return [env("CLIENT_SECRET"), `  "api_key": "${value}",`, `2026-11-30 INFO session started token=${value} user=ci`][i % 3];
    default:
      return value;
  }
}

/** Ordinary lines around the secrets: what such outputs are mostly made of. */
function filler(r: Random, n: number): string[] {
  const kinds = [
    () =>
      `2026-11-30T10:${String(r.int(60)).padStart(2, "0")}:${String(r.int(60)).padStart(2, "0")}Z INFO worker-${r.int(9)} handled request id=${r.int(1e6)} in ${r.int(900)} ms`,
    () => `+ npm run build --workspace packages/pkg-${r.int(20)}`,
    () => `  "version": "${r.int(9)}.${r.int(30)}.${r.int(10)}",`,
    () => `LOG_LEVEL=info`,
    () => `PORT=${3000 + r.int(100)}`,
    () => `src/module-${r.int(50)}.ts:${r.int(400)}:  const status = await fetch(url, { retries: ${r.int(5)} });`,
    () => `# rotate the keys every ${r.int(90)} days`,
  ];
  return Array.from({ length: n }, () => kinds[r.int(kinds.length)]());
}

/** At least `each` secrets of every format, in outputs of 20 to 60 lines. */
export function secretsCorpus(each = 6, seed = 18): Corpus {
  const r = new Random(seed);
  const planted: Planted[] = [];
  const outputs: string[] = [];
  let lines: string[] = [];
  let i = 0;
  for (let round = 0; round < each; round++) {
    for (const f of FORMATS) {
      const value = f.make(r);
      planted.push({ kind: f.kind, value });
      lines.push(...filler(r, 1 + r.int(4)), place(f.kind, value, r, i++));
      if (lines.length > 20 + r.int(40)) {
        outputs.push(`${lines.join("\n")}\n`);
        lines = [];
      }
    }
  }
  outputs.push(`${lines.join("\n")}\n`);
  return { outputs, planted };
}

/** A small seeded generator (a linear congruential one: enough for test data). */
class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed;
  }
  int(n: number): number {
    this.state = (this.state * 1_103_515_245 + 12_345) % 2 ** 31;
    return Math.floor((this.state / 2 ** 31) * n);
  }
  pick(alphabet: string, length: number): string {
    let s = "";
    for (let i = 0; i < length; i++) s += alphabet[this.int(alphabet.length)];
    return s;
  }
}
