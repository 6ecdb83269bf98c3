// The cosmetic calls (extension/ui.ts): whatever the host's UI context does,
// `say` and `setStatus` never throw, a status whose theme fails is shown in
// plain text, and the first failure is reported once through a channel that
// still works. Pi's own contexts are stood in for by plain objects here; the
// same cases inside real Pi are in tests/e2e/guard-ui-errors.test.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { say, setStatus, UI_FAILURE_KEY } from "../../extension/ui.ts";

type Loose = Record<string, unknown>;

/** A recording UI, with `change` applied on top (a throwing or missing method). */
function host(change: (ui: Loose) => void = () => {}) {
  const notes: [string, string][] = [];
  const statuses: [string, string | undefined][] = [];
  const ui: Loose = {
    notify: (text: string, level: string) => notes.push([text, level]),
    setStatus: (key: string, text: string | undefined) => statuses.push([key, text]),
    theme: { fg: (color: string, text: string) => `<${color}>${text}</>` },
  };
  change(ui);
  const ctx = { ui, mode: "tui", hasUI: true } as unknown as ExtensionContext;
  return { ctx, notes, statuses };
}

const boom = () => {
  throw new Error("boom");
};

/** The reports of a UI failure among the notifications and status texts. */
const reports = (h: ReturnType<typeof host>) => [
  ...h.notes.filter(([text]) => text.includes("the work goes on")).map(([text]) => text),
  ...h.statuses.filter(([key]) => key === UI_FAILURE_KEY).map(([, text]) => text),
];

test("a working UI: statuses painted part by part, notes delivered, nothing reported", () => {
  const h = host();
  setStatus(h.ctx, "k", [
    ["success", "saved"],
    ["dim", " rest"],
  ]);
  setStatus(h.ctx, "k", undefined);
  say(h.ctx, "hello", "info");
  assert.deepEqual(h.statuses, [
    ["k", "<success>saved</><dim> rest</>"],
    ["k", undefined],
  ]);
  assert.deepEqual(h.notes, [["hello", "info"]]);
});

test("a theme whose getter throws: the status in plain text, reported once by a notification", () => {
  const h = host((ui) => {
    Object.defineProperty(ui, "theme", { get: boom });
  });
  setStatus(h.ctx, "k", [
    ["success", "saved"],
    ["dim", " rest"],
  ]);
  setStatus(h.ctx, "k", [["warning", "again"]]);
  assert.deepEqual(h.statuses, [
    ["k", "saved rest"],
    ["k", "again"],
  ]);
  assert.deepEqual(reports(h), ["context-guard: ctx.ui.theme failed (boom); the status bar and notices may be incomplete, the work goes on"]);
  assert.equal(h.notes[0][1], "warning");
});

test("a theme whose fg throws (Pi's theme before initTheme): plain text, reported once", () => {
  const h = host((ui) => {
    ui.theme = new Proxy(
      {},
      {
        get: () => {
          throw new Error("Theme not initialized. Call initTheme() first.");
        },
      },
    );
  });
  setStatus(h.ctx, "k", [["success", "saved"]]);
  setStatus(h.ctx, "k", [["success", "saved"]]);
  assert.deepEqual(h.statuses, [
    ["k", "saved"],
    ["k", "saved"],
  ]);
  assert.deepEqual(reports(h), [
    "context-guard: ctx.ui.theme failed (Theme not initialized. Call initTheme() first.); the status bar and notices may be incomplete, the work goes on",
  ]);
});

test("a setStatus that throws: reported once by a notification; other notes still go", () => {
  const h = host((ui) => {
    ui.setStatus = boom;
  });
  setStatus(h.ctx, "k", [["success", "saved"]]);
  setStatus(h.ctx, "k", undefined);
  say(h.ctx, "still here", "info");
  assert.deepEqual(reports(h), ["context-guard: ctx.ui.setStatus failed (boom); the status bar and notices may be incomplete, the work goes on"]);
  assert.deepEqual(h.notes.at(-1), ["still here", "info"]);
});

test("a notify that throws: reported once under its own status key; statuses still go", () => {
  const h = host((ui) => {
    ui.notify = boom;
  });
  say(h.ctx, "one", "warning");
  say(h.ctx, "two", "error");
  setStatus(h.ctx, "k", [["dim", "off"]]);
  assert.deepEqual(reports(h), ["context-guard: ctx.ui.notify failed (boom); the status bar and notices may be incomplete, the work goes on"]);
  assert.deepEqual(h.statuses.at(-1), ["k", "<dim>off</>"]);
});

test("missing setStatus and theme: one report, by a notification", () => {
  const h = host((ui) => {
    delete ui.setStatus;
    delete ui.theme;
  });
  setStatus(h.ctx, "k", [["success", "saved"]]);
  setStatus(h.ctx, "k", [["success", "saved"]]);
  assert.deepEqual(reports(h), ["context-guard: this host's UI has no theme; the status bar and notices may be incomplete, the work goes on"]);
});

test("nothing works: every call returns, nothing is reported anywhere", () => {
  const h = host((ui) => {
    ui.notify = boom;
    ui.setStatus = boom;
    ui.theme = undefined;
  });
  setStatus(h.ctx, "k", [["success", "saved"]]);
  say(h.ctx, "lost", "error");
  assert.deepEqual(reports(h), []);
  for (const ctx of [{} as ExtensionContext, { ui: null } as unknown as ExtensionContext]) {
    setStatus(ctx, "k", [["success", "saved"]]);
    say(ctx, "lost", "error");
  }
});

test("a stale context (Pi's ctx.ui getter throws after a reload): every call returns", () => {
  const ctx = Object.defineProperties({}, { ui: { get: boom }, mode: { get: boom }, hasUI: { get: boom } }) as ExtensionContext;
  setStatus(ctx, "k", [["success", "saved"]]);
  say(ctx, "lost", "info");
});

test("an error message that is long or carries escapes is cleaned and clipped in the report", () => {
  const h = host((ui) => {
    ui.setStatus = () => {
      throw new Error(`\u001b[31mred\u001b[0m ${"x".repeat(500)}`);
    };
  });
  setStatus(h.ctx, "k", [["success", "saved"]]);
  const all = reports(h);
  assert.equal(all.length, 1);
  const report = all[0] ?? "";
  assert.doesNotMatch(report, /\u001b/);
  assert.ok(report.length < 320, `${report.length} chars`);
});
