// The audit's page as a person sees it (issue 19 part 6): sessions written
// by the harness (two with the guard's records, one without; a long first
// prompt with emoji, CJK, markup and control characters; a long project
// path; a compaction; a long tool name), the real command with `--html`, and
// the page opened in Debian's Chromium (headless, through puppeteer-core's
// pipe, not a WebSocket; no host name resolves for it) at 1280 and 400 px. Checked there: no text runs
// out of its box, every mark of every chart has its entry in the legend
// beside it, each session is named by date, folder and first prompt, the
// sentences say tokens and dollars, and the sessions with and without the
// guard stand side by side (stacked when narrow). Screenshots go to
// target/audit-page/, to be looked at.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import puppeteer from "puppeteer-core";
import { writeSession } from "../harness/audit-sessions.ts";
import { piModules, piVersion, repoRoot } from "../harness/pi.ts";

const CHROMIUM = "/usr/bin/chromium";
const bin = join(repoRoot, "bin", "pi-context-guard.mjs");
const shots = join(repoRoot, "target", "audit-page");

const LONG_CWD = `/home/someone/work/clients/northwind-trading/${"a-very-long-project-folder-name-with-no-break-in-it-".repeat(3)}end`;
const PROMPT = `Find the handler 🔍 that answers 状态 requests (状态码 503), <script>alert("x")</script> \u001b[31mred\u0007 and ${"explain each retry in detail ".repeat(12)}`;

interface Made {
  path: string;
  cwd: string;
  startedAt: string;
  prompt: string;
  guard: boolean;
}

async function sessions(dir: string): Promise<Made[]> {
  const made: Made[] = [
    { path: join(dir, "with-long.jsonl"), cwd: LONG_CWD, startedAt: "2026-03-04T09:15:00.000Z", prompt: PROMPT, guard: true },
    {
      path: join(dir, "with-short.jsonl"),
      cwd: "/home/someone/work/api",
      startedAt: "2026-03-04T16:02:00.000Z",
      prompt: "List the services that retry.",
      guard: true,
    },
    {
      path: join(dir, "without.jsonl"),
      cwd: "/home/someone/work/shop",
      startedAt: "2026-03-05T14:40:00.000Z",
      prompt: "Why do checkout requests time out?",
      guard: false,
    },
  ];
  const tools = [["bash", "read"], ["read"], ["bash", "mcp__github__search_repositories_with_a_rather_long_tool_name_indeed"]];
  for (const [i, m] of made.entries()) {
    await writeSession(m.path, {
      bytes: 250_000,
      outputChars: 20_000,
      callsPerRun: 2,
      tools: tools[i],
      startedAt: m.startedAt,
      cwd: m.cwd,
      prompt: m.prompt,
      guard: m.guard ? { keep: 0.1 } : undefined,
      compactAfterRun: m.guard ? undefined : 2,
    });
  }
  return made;
}

/** Runs in the page: every text that runs out of its element, out of a block around it, or off the page. */
function overflows(): string[] {
  const problems: string[] = [];
  const name = (el: Element) =>
    `<${el.tagName.toLowerCase()}${el.getAttribute("class") ? ` class="${el.getAttribute("class")}"` : ""}> "${(el.textContent ?? "").trim().slice(0, 50)}"`;
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth) problems.push(`the page scrolls sideways: ${root.scrollWidth} px wide in ${window.innerWidth}`);
  for (const el of Array.from(document.body.querySelectorAll("*"))) {
    if (el.closest("svg")) continue;
    const own = Array.from(el.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && (n.textContent ?? "").trim() !== "");
    if (own && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1)
      problems.push(`${name(el)}: its text is ${el.scrollWidth} px wide in a ${el.clientWidth} px box`);
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const host = n.parentElement;
    if (!host || !(n.textContent ?? "").trim() || host.closest("svg")) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of Array.from(range.getClientRects())) {
      if (r.width === 0) continue;
      if (r.left < -0.5 || r.right > window.innerWidth + 0.5) problems.push(`${name(host)}: text off the page (${Math.round(r.left)}..${Math.round(r.right)})`);
      for (let a: Element | null = host; a && a !== root; a = a.parentElement) {
        const cs = getComputedStyle(a);
        const clips = cs.overflowX !== "visible" || cs.overflowY !== "visible";
        if (!clips && (cs.display === "inline" || cs.display === "contents")) continue;
        const box = a.getBoundingClientRect();
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5) problems.push(`${name(host)}: text runs out of ${name(a)} sideways`);
        if (clips && (r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5))
          problems.push(`${name(host)}: text cut by ${name(a)} (overflow ${cs.overflowX}/${cs.overflowY})`);
      }
    }
  }
  // Text drawn inside a chart: within the chart's own box (an SVG cuts what runs past its edge).
  for (const text of Array.from(document.querySelectorAll("svg text"))) {
    const svg = text.closest("svg");
    if (!svg) continue;
    const r = text.getBoundingClientRect();
    const box = svg.getBoundingClientRect();
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
      problems.push(`${name(text)}: chart text cut at the chart's edge`);
  }
  return problems;
}

/** Runs in the page: every drawn mark of every chart, and whether its figure's legend shows it the same way. */
function legends(): { problems: string[]; marks: Record<string, number>; entries: string[] } {
  const problems: string[] = [];
  const marks: Record<string, number> = {};
  const entries: string[] = [];
  const look = (e: Element) => {
    const cs = getComputedStyle(e);
    return `fill ${cs.fill}, stroke ${cs.stroke}, dashes ${cs.strokeDasharray}`;
  };
  for (const svg of Array.from(document.querySelectorAll("svg")))
    if (!svg.closest("figure")) problems.push(`an SVG outside a figure, with no legend: ${svg.outerHTML.slice(0, 80)}`);
  for (const figure of Array.from(document.querySelectorAll("figure"))) {
    const shown = new Map<string, string>();
    for (const li of Array.from(figure.querySelectorAll(".legend li"))) {
      const words = (li.textContent ?? "").trim();
      if (!words) problems.push("a legend entry with no words");
      entries.push(words);
      for (const s of Array.from(li.querySelectorAll("svg.swatch *"))) shown.set(s.getAttribute("class") ?? "", look(s));
    }
    const drawn = new Set<string>();
    for (const e of Array.from(figure.querySelectorAll("svg:not(.swatch) *"))) {
      if (e.tagName === "title") continue;
      const cls = e.getAttribute("class") ?? "";
      marks[cls] = (marks[cls] ?? 0) + 1;
      drawn.add(cls);
      if (!cls.startsWith("mark-")) problems.push(`a <${e.tagName}> drawn with no mark class, so no legend entry can explain it`);
      else if (!shown.has(cls)) problems.push(`${cls} is drawn but its figure's legend has no entry for it`);
      else if (shown.get(cls) !== look(e)) problems.push(`${cls} is drawn as ${look(e)} but its legend shows ${shown.get(cls)}`);
    }
    for (const cls of shown.keys()) if (!drawn.has(cls)) problems.push(`the legend explains ${cls}, which its figure does not draw`);
  }
  // Two marks that look the same could not be told apart by their legends.
  const looks = new Map<string, string>();
  for (const s of Array.from(document.querySelectorAll(".legend svg.swatch *"))) {
    const cls = s.getAttribute("class") ?? "";
    const l = `${s.tagName} ${look(s)}`;
    if (looks.has(l) && looks.get(l) !== cls) problems.push(`${cls} and ${looks.get(l)} look the same`);
    looks.set(l, cls);
  }
  return { problems, marks, entries };
}

/** Runs in the page: each session's name, sentences and group, and where the two groups stand. */
function sessionsShown() {
  const box = (sel: string) => {
    const r = document.querySelector(sel)?.getBoundingClientRect();
    return r ? { left: r.left, right: r.right, top: r.top, bottom: r.bottom } : undefined;
  };
  return {
    scripts: document.querySelectorAll("script").length,
    cards: Array.from(document.querySelectorAll("article.session")).map((a) => ({
      group: a.closest(".group")?.classList.contains("with") ? "with" : "without",
      time: a.querySelector("h3 time")?.textContent ?? "",
      datetime: a.querySelector("h3 time")?.getAttribute("datetime") ?? "",
      folder: a.querySelector("h3 .folder")?.textContent ?? "",
      prompt: a.querySelector(".prompt")?.textContent ?? "",
      paths: Array.from(a.querySelectorAll(".where .path")).map((p) => p.textContent ?? ""),
      did: a.querySelector(".did")?.textContent ?? "",
      would: a.querySelector(".would")?.textContent ?? "",
    })),
    compare: Array.from(document.querySelectorAll("table.compare thead th")).map((th) => th.textContent ?? ""),
    withGroup: box(".group.with"),
    withoutGroup: box(".group.without"),
  };
}

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

test(`Pi ${piVersion}: the audit page in Chromium: nothing cut, every mark explained, sessions named, with and without side by side`, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is missing: this test needs Debian's package \`chromium\` (apt-get install chromium)`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "cg-audit-page-"));
  const profile = mkdtempSync(join(tmpdir(), "cg-chromium-"));
  let browser: Awaited<ReturnType<typeof puppeteer.launch>> | undefined;
  try {
    const made = await sessions(dir);
    const page = join(dir, "audit.html");
    // This Pi's projection (its `pi` first on PATH); dates in UTC, so that the names below are known.
    const env = { ...process.env, TZ: "UTC", PATH: [join(piModules, ".bin"), process.env.PATH ?? ""].join(delimiter) };
    const r = spawnSync(process.execPath, [bin, "audit", "--html", page, ...made.map((m) => m.path)], { encoding: "utf8", env });
    assert.equal(r.status, 0, r.stderr);
    // The terminal's text: the same names, and nothing of the prompt that a terminal would obey.
    assert.doesNotMatch(r.stdout, CONTROL, "no control character reaches the terminal");
    assert.match(
      r.stdout,
      /^2026-03-04 09:15 {2}a-very-long-project-folder-name-with-no-break-in-it-.*end {2}"Find the handler 🔍 that answers 状态 requests/m,
    );
    assert.match(r.stdout, /^2026-03-05 14:40 {2}shop {2}"Why do checkout requests time out\?"$/m);
    assert.match(
      r.stdout,
      /^ {2}The guard kept \S+ tokens of tool output out of the context at \d+ run ends and checkpoints, so the requests after that sent \S+ fewer tokens in all\. Its classifier cost/m,
    );
    assert.match(r.stdout, /^ {2}guard would: remove old images: none; ask its classifier about \d+ tool outputs \(\S+ tokens\) it could shorten or drop\.$/m);
    // Plain words (issue 28): none of the audit's old jargon, and "would" only for the session without the guard.
    assert.doesNotMatch(r.stdout, /candidate|sparing|passes|measured by the \w+ rule|not added|whole file \(/);
    assert.equal(r.stdout.match(/^ {2}guard would:/gm)?.length, 1, "one session without the guard");
    assert.match(
      r.stdout,
      /^ {2}Dropping them would spare the later requests up to \S+ tokens \(about \$[\d.]+\) but make the provider write \S+ tokens to its cache again \(about \$[\d.]+\): on balance about \$[\d.]+ (saved|lost), estimated at \$[\d.]+ per million input tokens/m,
    );
    assert.match(r.stdout, /^total: 3 sessions \(2 with the guard, 1 without\)/m);
    assert.match(r.stdout, /With the guard against without, per session on average: /);

    const html = readFileSync(page, "utf8");
    assert.doesNotMatch(html, /<script|<link|<img|url\(|@import|https?:\/\/(?!www\.w3\.org)/, "self-contained: nothing to fetch");
    mkdirSync(shots, { recursive: true });

    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      // Pipes, not a WebSocket: the test opens no socket for the browser at all.
      pipe: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        // Debian's chromium still asks for the network time, component and extension updates and the
        // Google accounts (seen with strace): no name resolves, so no request leaves; the network time
        // is not asked for. What remains is Chromium's IPv6 probe, a UDP connect that sends nothing.
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--disable-features=NetworkTimeServiceQuerying",
        `--user-data-dir=${profile}`,
      ],
    });
    const written: string[] = [];
    for (const width of [1280, 400]) {
      const tab = await browser.newPage();
      const fetched: string[] = [];
      tab.on("request", (q) => fetched.push(q.url()));
      await tab.setViewport({ width, height: 900 });
      await tab.goto(pathToFileURL(page).href, { waitUntil: "load" });
      assert.deepEqual(
        fetched.filter((u) => !u.startsWith("file:")),
        [],
        `${width} px: the page fetched nothing but itself`,
      );

      const cut = await tab.evaluate(overflows);
      assert.deepEqual(cut, [], `${width} px: text runs out of its box`);

      const { problems, marks, entries } = await tab.evaluate(legends);
      assert.deepEqual(problems, [], `${width} px: marks and legends`);
      // The charts draw what the sessions hold: the context of each, the guard's edits, the compaction, the tool bars.
      for (const mark of ["mark-context", "mark-request", "mark-edit", "mark-compaction", "mark-output", "mark-with", "mark-without"]) {
        assert.ok((marks[mark] ?? 0) > 0, `${width} px: ${mark} is drawn (${JSON.stringify(marks)})`);
      }
      assert.ok(entries.some((e) => /guard removed or shortened/.test(e)) && entries.some((e) => /compacted/.test(e)), entries.join(" | "));

      const shown = await tab.evaluate(sessionsShown);
      assert.equal(shown.scripts, 0, "the prompt's <script> is text, not an element");
      assert.equal(shown.cards.length, made.length);
      for (const m of made) {
        const card = shown.cards.find((c) => c.paths.includes(m.path));
        assert.ok(card, `${m.path} has its card`);
        assert.equal(card.group, m.guard ? "with" : "without");
        assert.equal(card.time, `${m.startedAt.slice(0, 10)} ${m.startedAt.slice(11, 16)}`);
        assert.equal(card.datetime, m.startedAt);
        assert.equal(card.folder, basename(m.cwd));
        assert.ok(card.paths.includes(m.cwd), `the full folder is there too: ${card.paths}`);
        assert.doesNotMatch(card.prompt, CONTROL);
        const words = m.prompt.replace(CONTROL, "").replace(/\s+/g, " ");
        assert.ok(card.prompt.startsWith(`“${words.slice(0, 60)}`), `${card.prompt} names the first prompt`);
        if (m.prompt.length > 200) assert.ok(card.prompt.endsWith("…”") && card.prompt.length < 200, `a long prompt is clipped: ${card.prompt}`);
        else assert.equal(card.prompt, `“${m.prompt}”`);
        // Said in plain sentences, with tokens and dollars.
        if (!m.guard)
          assert.match(
            card.would,
            /^The guard would show its classifier \d+ tool outputs of \S+ tokens to shorten or drop\. Dropping them would spare the later requests up to \S+ tokens \(about \$[\d.]+\) but make the provider write \S+ tokens to its cache again \(about \$[\d.]+\): on balance about \$[\d.]+ (saved|lost)/,
          );
        else assert.equal(card.would, "", "no 'would' where the guard ran");
        if (m.guard)
          assert.match(
            card.did,
            /^The guard kept \S+ tokens of tool output out of the context at \d+ run ends and checkpoints, so the requests after that sent \S+ fewer tokens in all\. Its classifier cost \$[\d.]+\./,
          );
        else assert.equal(card.did, "");
      }
      const long = shown.cards.find((c) => c.paths.includes(made[0].path));
      assert.match(long?.prompt ?? "", /🔍.*状态.*<script>alert\("x"\)<\/script>/, "emoji, CJK and markup shown as written");

      assert.deepEqual(shown.compare.slice(1), ["With the guard", "Without the guard"]);
      const a = shown.withGroup;
      const b = shown.withoutGroup;
      assert.ok(a && b, "both groups are on the page");
      if (width === 1280) assert.ok(a.right <= b.left && Math.abs(a.top - b.top) < 2, `side by side at 1280 px: ${JSON.stringify({ a, b })}`);
      else assert.ok(b.top >= a.bottom, `stacked at 400 px: ${JSON.stringify({ a, b })}`);

      const shot = join(shots, `audit-page-${width}.png`);
      await tab.screenshot({ path: shot as `${string}.png`, fullPage: true });
      written.push(shot);
      await tab.close();
    }
    t.diagnostic(`screenshots of the page: ${written.join(", ")}`);
    console.log(`audit page screenshots: ${written.join(", ")}`);
  } finally {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
});
