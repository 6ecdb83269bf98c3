// A straightforward TypeScript version of the secrets step (issue 18), for
// the benchmark only: every rule's pattern (guard/secrets/rules.rs, in
// JavaScript's syntax) run over the whole text with V8's regular
// expressions, the entropy floors and the letters-only allowance applied to
// each match, the matches merged and replaced by placeholders. No prefilter,
// no look at the line around a match: what one would write first.

const ALNUM = "A-Za-z0-9";

/** [kind, pattern, entropy floor]; the secret is the first group, else the match. */
const RULES: [string, RegExp, number][] = [
  ["aws-access-key", /\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b/g, 3],
  ["github-token", /(github_pat_\w{60,255})/g, 3],
  ["github-token", new RegExp(`(gh[pousr]_[${ALNUM}]{30,255})`, "g"), 3],
  ["gitlab-token", /(gl(?:pat|ptt|rt|cbt|dt|ffct|ft|imt|agent|oas|soat)-[0-9a-zA-Z_.-]{20,300})/g, 3],
  ["slack-token", /(xox[abeoprs]-[0-9A-Za-z.-]{10,300})/g, 2],
  ["slack-webhook", /(hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/]{20,300})/g, 0],
  ["stripe-key", /\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})/g, 2],
  ["anthropic-key", /(sk-ant-(?:api03|admin01|oat01|ort01)-[a-zA-Z0-9_-]{32,300})/g, 0],
  ["openai-key", /\b(sk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{32,300})/g, 3],
  ["google-api-key", /\b(AIza[\w-]{35})/g, 3],
  ["npm-token", /\b(npm_[a-z0-9]{36})/gi, 2],
  ["jwt", /\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/\\_-]{17,}\.(?:[a-zA-Z0-9/\\_-]{10,}={0,2})?)/g, 3],
  ["private-key", /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]{64,}?KEY(?: BLOCK)?-----/gi, 0],
  [
    "generic-secret",
    /[\w.-]{0,50}?(?:access|auth|api|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[`'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[`'"\s;,)\]}]|\\[nr]|$)/gim,
    3.5,
  ],
  ["url-credentials", /[a-z][a-z0-9+.-]*:\/\/[^\s:@/]*:([^\s@/]+)@/gi, 0],
  ["authorization", /(?:bearer|basic|token)[ \t]+([\w.~+/-]{8,}=*)/gi, 2.75],
  ["password", /(?:passw\w*|pwd|\w*pass)["']?[ \t]*[:=][ \t]*["']?([^\s"'`;,]{6,})/gi, 2],
];

/** Shannon entropy in bits per character (gitleaks' `shannonEntropy`). */
function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** The secrets of `text`: merged spans, in order. */
export function findSecrets(text: string): [start: number, end: number, kind: string][] {
  const spans: [number, number, string][] = [];
  for (const [kind, re, floor] of RULES) {
    for (const m of text.matchAll(re)) {
      const secret = m[1] ?? m[0];
      const start = (m.index ?? 0) + (m[1] === undefined ? 0 : m[0].indexOf(m[1]));
      if (floor > 0 && entropy(secret) <= floor) continue;
      // A name in code is not a secret (gitleaks' generic allowlist); a URL's password may be letters only.
      if (kind !== "url-credentials" && /^[A-Za-z_.-]+$/.test(secret)) continue;
      spans.push([start, start + secret.length, kind]);
    }
  }
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const merged: [number, number, string][] = [];
  for (const span of spans) if (!(merged.length && span[0] < merged[merged.length - 1][1])) merged.push(span);
  return merged;
}

/** `text` with its secrets as `[secret: kind]`, and how many were found. */
export function withholdSecrets(text: string): { text: string; found: number } {
  const spans = findSecrets(text);
  let out = "";
  let at = 0;
  for (const [start, end, kind] of spans) {
    out += `${text.slice(at, start)}[secret: ${kind}]`;
    at = end;
  }
  return { text: out + text.slice(at), found: spans.length };
}

/**
 * Every string of every request's state withheld, in place (the same step as the core's `withhold`);
 * `arrived`, the chunk texts withheld when their outputs arrived (`arrive` in pass.ts), by their text.
 */
export function withholdRequests<R extends { state: object }>(requests: R[], arrived?: ReadonlyMap<string, string>): R[] {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return arrived?.get(v) ?? withholdSecrets(v).text;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  for (const r of requests) r.state = walk(r.state) as object;
  return requests;
}
