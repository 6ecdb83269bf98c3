// Nothing secret leaves the machine (issue 18), inside real Pi: a run reads a
// `.env`, a deploy log with a database URL and a bearer token, an SSH private
// key, and searches the project for keys (so secrets turn up in a large
// output that is sent), with a secret in the question too. Every request the
// stand-in classifier receives is searched for every secret: none is there,
// their placeholders are; the outputs of secret files are not sent at all;
// the window, the session file and `recall` keep the originals; the record
// and `/guard` say what was withheld, by kind, never the values.
import assert from "node:assert/strict";
import { test } from "node:test";
import { keepChunks, type ClassifyRequest } from "../harness/classifier.ts";
import { assertNoPassFailure } from "../harness/guard-checks.ts";
import { entriesOf, textOf, toolResultEntry, toolResults } from "../harness/inspect.ts";
import { type Loose, piVersion } from "../harness/pi.ts";
import { anthropicSession, startAnthropicServer } from "../harness/anthropic-server.ts";
import { startSession, type Step } from "../harness/session.ts";

// Fake secrets in each provider's format (none is real).
const SECRETS = {
  awsKey: "AKIA4HK2JQ7ZT5XW9P3L",
  awsSecret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9Q3x7Lk2",
  github: "ghp_4fJ2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5Ua2Ig",
  slack: "xoxb-2048151234567-2059876543210-Qk7vRz3LmP9xTn2WcYb5HdJs",
  openai: "sk-proj-Xq3vL9mK2pR7tY4wB8nD1sF6hJ0cZ5aE-GuIoP2kLm9QxR7tYv1",
  anthropic: "sk-ant-api03-Rk8mW2qL5vX9pT3nB7yH1cJ6fD4gS0aZ-EuIoP2kLm9QxR7tYv1Bn3Hs8Dp0Wc6Ze5Ua2Ig7Ko1Nm4PqAA",
  stripe: "sk_live_51HxQk7vRz3LmP9xTn2WcYb5HdJsA8eF",
  dbPassword: "Tr0ub4dor&3-horse",
  urlPassword: "pg-S3cr3t-9xQ2",
  jwt: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJkZXBsb3ktYm90Iiwic2NvcGUiOiJhZG1pbiJ9.Qk7vRz3LmP9xTn2WcYb5HdJsA8eF1gH4iJ6kL0m",
};
const KEY_BODY = [
  "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
  "QyNTUxOQAAACCmT2pQ9xLk3vR8wB5nY1tH6sJ0cF4gZ7aE2uI9oP3kLQAAAJgx7Vq2Me1a",
  "tgAAAAtzc2gtZWQyNTUxOQAAACCmT2pQ9xLk3vR8wB5nY1tH6sJ0cF4gZ7aE2uI9oP3kLQ",
];
const PRIVATE_KEY = `-----BEGIN OPENSSH PRIVATE KEY-----\n${KEY_BODY.join("\n")}\n-----END OPENSSH PRIVATE KEY-----`;

const env = `# production settings
AWS_ACCESS_KEY_ID=${SECRETS.awsKey}
AWS_SECRET_ACCESS_KEY=${SECRETS.awsSecret}
GITHUB_TOKEN=${SECRETS.github}
SLACK_BOT_TOKEN=${SECRETS.slack}
OPENAI_API_KEY=${SECRETS.openai}
ANTHROPIC_API_KEY=${SECRETS.anthropic}
STRIPE_SECRET_KEY=${SECRETS.stripe}
DB_PASSWORD=${SECRETS.dbPassword}
`;

/** A deploy log of about 20 kB: routine lines, and the secrets a real one leaks. */
function deployLog(): string {
  const lines: string[] = [];
  for (let i = 0; i < 260; i++) {
    lines.push(
      `2026-11-30T10:${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}Z INFO step ${i}: migrated table_${i % 17} in ${i % 90} ms`,
    );
    if (i === 40) lines.push(`2026-11-30T10:00:40Z DEBUG connecting to postgres://deploy:${SECRETS.urlPassword}@db.internal:5432/app`);
    if (i === 120) lines.push(`2026-11-30T10:02:00Z DEBUG > POST /v1/releases Authorization: Bearer ${SECRETS.jwt}`);
    if (i === 200) lines.push(`2026-11-30T10:03:20Z ERROR release failed: upstream answered 503 for ${SECRETS.awsKey}`);
  }
  return `${lines.join("\n")}\n`;
}

/** Source files that mention keys the way code does (names, not values), so the search is large. */
function sources(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let f = 0; f < 40; f++) {
    const body = Array.from({ length: 12 }, (_, i) => `export const token${i} = readToken(process.env.API_KEY_${f}_${i}); // key rotation ${f}.${i}`).join(
      "\n",
    );
    files[`src/service-${f}.ts`] = `${body}\n`;
  }
  return files;
}

const allSecrets = [...Object.values(SECRETS), ...KEY_BODY];

/** Every request the stand-in classifier received, as the JSON it was sent. */
const sent = (calls: { request: ClassifyRequest }[]) => calls.map((c) => JSON.stringify(c.request));

test(`Pi ${piVersion}: no secret reaches the judge; the window keeps every original`, async () => {
  // Keep the chunks that mention the 503, drop the rest: the search and the log get distilled.
  const behaviour = keepChunks((request: ClassifyRequest) =>
    Object.entries((request.state.chunks ?? {}) as Record<string, string>)
      .filter(([, text]) => text.includes("503"))
      .map(([id]) => Number(id.replace("chunk_", ""))),
  );
  const pi = await startSession({
    files: { ".env": env, "logs/deploy.log": deployLog(), "keys/id_ed25519": `${PRIVATE_KEY}\n`, ...sources() },
    classifier: behaviour,
    script: [
      [
        { tool: "read", args: { path: ".env" }, id: "env" },
        { tool: "bash", args: { command: "cat logs/deploy.log" }, id: "log" },
        { tool: "read", args: { path: "keys/id_ed25519" }, id: "key" },
        { tool: "bash", args: { command: "grep -rn -i -E 'key|token|password' . --exclude-dir=node_modules" }, id: "grep" },
      ],
      `The release failed on a 503 from the upstream; the key ${SECRETS.awsKey} is fine.`,
      "Rotate it then.",
    ],
  });
  try {
    await pi.prompt(`Why did the release fail? Our key is ${SECRETS.awsKey}.`);
    const branch = pi.branch();
    const grepRaw = textOf(toolResultEntry(branch, "grep").message);
    assert.ok(grepRaw.includes(SECRETS.github) && grepRaw.length > 8_000, "the search found the .env's lines and is large");

    // Sent: something of the log and the search, none of the secrets, their placeholders instead.
    const requests = sent(pi.classifierCalls);
    assert.ok(requests.length > 0, "the judge was asked");
    for (const secret of allSecrets) {
      for (const r of requests) assert.ok(!r.includes(secret), `${secret.slice(0, 12)}… reached the judge`);
    }
    const all = requests.join("\n");
    for (const kind of [
      "aws-access-key",
      "aws-secret-key",
      "github-token",
      "slack-token",
      "openai-key",
      "anthropic-key",
      "stripe-key",
      "password",
      "url-credentials",
      "jwt",
    ]) {
      assert.ok(all.includes(`[secret: ${kind}]`), `a ${kind} placeholder was sent`);
    }
    // The secret files were not sent at all: neither read's output is in any request.
    assert.ok(!all.includes("# production settings") && !all.includes("BEGIN OPENSSH"), "a secret file's output was sent");
    const args = pi.classifierCalls.map((c) => (c.request.state as Loose).tool_arguments).filter(Boolean);
    assert.ok(!args.some((a: string) => a.includes('.env"') || a.includes("id_ed25519")), "no request is about a secret file");

    // The record counts them by kind, with the files; never a value.
    const records = entriesOf(branch, "custom", "context-guard");
    const withheld = records.at(-1)?.data.withheld;
    assert.ok(withheld, "the record says what was withheld");
    assert.ok(withheld.secrets["aws-access-key"] >= 1 && withheld.secrets.jwt === 1, JSON.stringify(withheld));
    assert.deepEqual(withheld.files, ["read `.env`", "read `keys/id_ed25519`"]);
    for (const secret of allSecrets) assert.ok(!JSON.stringify(records).includes(secret));

    // The window keeps the originals: the .env whole, the kept lines verbatim.
    await pi.prompt("Thanks.");
    const last = pi.requests.at(-1)?.messages ?? [];
    const [envSeen, logSeen, keySeen, grepSeen] = toolResults(last).map(textOf);
    assert.equal(envSeen, textOf(toolResultEntry(branch, "env").message));
    assert.ok(envSeen.includes(SECRETS.anthropic) && keySeen.includes(KEY_BODY[1]));
    assert.ok(logSeen.startsWith("[context-guard] Distilled") && logSeen.includes(`upstream answered 503 for ${SECRETS.awsKey}`), logSeen.slice(0, 300));
    assert.ok(grepSeen.startsWith("[context-guard]") && !grepSeen.includes("[secret:"));
    assert.ok(!JSON.stringify(last).includes("[secret:"), "the window never sees a placeholder");

    // /guard names the kinds and the files, never a value.
    await pi.prompt("/guard details");
    const report = pi.notifications.at(-1)?.message ?? "";
    assert.match(
      report,
      /withheld from the judge in the last pass that held any: \d+ secrets as placeholders \(.*aws-access-key \d.*\); not sent, as files or commands that print secrets: read `\.env`, read `keys\/id_ed25519`/,
    );
    for (const secret of allSecrets) assert.ok(!report.includes(secret));
    assertNoPassFailure(pi.notifications);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: the next run's history and exchanges carry placeholders, and a user's pattern is withheld`, async () => {
  const pi = await startSession({
    files: { "notes.txt": `${"routine line\n".repeat(900)}internal id acme_7f3k9q2m5x8w\n`, ...sources() },
    classifier: keepChunks(() => [1]),
    guardSettings: { model: "fakejev/jev-test", secretPatterns: ["acme_[a-z0-9]{12}", "(unclosed"] },
    script: [
      { tool: "bash", args: { command: "cat notes.txt" }, id: "n1" },
      `Noted; the database password is ${SECRETS.dbPassword} per the runbook.`,
      { tool: "bash", args: { command: "grep -rn token src" }, id: "g1" },
      "Done.",
    ],
  });
  try {
    await pi.prompt(`Remember STRIPE_SECRET_KEY=${SECRETS.stripe} and read the notes.`);
    await pi.prompt("Now find the tokens in src.");
    const all = sent(pi.classifierCalls).join("\n");
    assert.ok(all.includes("earlier_conversation"), "the second pass sent the history");
    for (const secret of [SECRETS.stripe, SECRETS.dbPassword, "acme_7f3k9q2m5x8w"]) assert.ok(!all.includes(secret), `${secret} reached the judge`);
    assert.ok(all.includes("[secret: custom]") && all.includes("[secret: stripe-key]"));
    // The pattern that does not compile is named in a warning, the other one works.
    await pi.prompt("/guard details");
    assert.match(pi.notifications.at(-1)?.message ?? "", /"secretPatterns": the pattern "\(unclosed" is left out/);
  } finally {
    await pi.dispose();
  }
});

test(`Pi ${piVersion}: a chat model as the judge (Pi's anthropic provider, loopback) receives no secret either`, async () => {
  process.env.ANTHROPIC_API_KEY = "loopback-key";
  // The judge answers nothing usable: everything is kept. What matters here is what it was sent.
  const server = await startAnthropicServer(Array.from({ length: 100 }, (): Step => () => '{"answers": {}}'));
  const loopback = anthropicSession(server);
  const pi = await startSession({
    ...loopback.options,
    files: { "logs/deploy.log": deployLog(), ...sources() },
    guardSettings: { model: "anthropic/claude-haiku-4-5", timeoutMs: 20_000 },
    script: [
      [
        { tool: "bash", args: { command: "cat logs/deploy.log" }, id: "log" },
        { tool: "bash", args: { command: "grep -rn -i -E 'key|token' src" }, id: "grep" },
      ],
      `The release failed on a 503; the JWT ${SECRETS.jwt.slice(0, 20)}… was accepted.`,
    ],
  });
  try {
    await pi.prompt(`Why did the release fail? The deploy password is ${SECRETS.urlPassword}.`);
    const judged = server.bodies.filter((b: Loose) => JSON.stringify(b.system ?? "").includes("You are the judge of a context guard"));
    assert.ok(judged.length > 0, "the judge was asked");
    const sentToJudge = JSON.stringify(judged);
    for (const secret of [SECRETS.urlPassword, SECRETS.jwt, SECRETS.awsKey])
      assert.ok(!sentToJudge.includes(secret), `${secret.slice(0, 12)}… reached the judge`);
    for (const kind of ["url-credentials", "jwt", "aws-access-key"])
      assert.ok(sentToJudge.includes(`[secret: ${kind}]`), `a ${kind} placeholder reached the judge`);
  } finally {
    await pi.dispose();
  }
});
