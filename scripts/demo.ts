// The offline demo: this package inside a real Pi session.
//
// Real: Pi's AgentSession, its tools (bash, read) on a real folder, its session
// manager, this package loaded by Pi's loader. Stand-ins (no network, no key):
// the main model is scripted, and the classifier is a local rule that plays
// Jev's part (it keeps the chunks that mention "=== 503").
//
// It needs only Node and npm: the search is plain `grep -rn` (ripgrep is not on
// every machine), and the core is the committed pkg/. It checks its own story
// (the search distilled, the recall byte for byte the original) and exits 1
// with the reason when either does not hold, so a broken first run cannot
// look like a working one.
import { keepMatching } from "../tests/harness/classifier.ts";
import { fixtureRepo } from "../tests/harness/fixture-repo.ts";
import { textOf, toolResults } from "../tests/harness/inspect.ts";
import { type Loose, piVersion } from "../tests/harness/pi.ts";
import { startSession } from "../tests/harness/session.ts";

const rule = "─".repeat(78);
const say = (title: string, body = "") => console.log(`\n${rule}\n${title}\n${rule}${body ? `\n${body}` : ""}`);
const kb = (n: number) => `${(n / 1000).toFixed(1)}k chars`;
/** `line` in at most `width` characters: cut at a space, with an ellipsis, never inside a number. */
const fit = (line: string, width = 110) => {
  if (line.length <= width) return line;
  const space = line.lastIndexOf(" ", width - 1);
  return `${line.slice(0, space > width / 2 ? space : width - 1)}…`;
};
const RECALL = /recall\(\{"entryId":"([^"]+)"\}\)/;
const SEARCH = "grep -rn status src/services";
/** The status bar's text, and what its marks say (`🛡 −14k tok · 2 items`: tokens kept out, in how many items). */
const status = (text: string | undefined) => {
  const m = /−([\d.]+k?) tok · (\d+) items?/.exec(text ?? "");
  return m ? `${text} (about ${m[1]} tokens kept out of the window, in ${m[2]} item${m[2] === "1" ? "" : "s"})` : String(text);
};
/** What went wrong with the story, in the reader's words; empty when it held. */
const problems: string[] = [];

say(
  `pi-context-guard — offline demo inside real Pi ${piVersion}`,
  "STAND-INS: the main model is scripted and the classifier is a local rule playing Jev's part.\n" +
    "Everything else is real: Pi's session, its bash and read tools on a generated project, and this\n" +
    "package loaded by Pi's own loader.",
);

const pi = await startSession({ files: fixtureRepo(), classifier: keepMatching("=== 503"), guardSettings: { waitForJudge: false } });
try {
  pi.script(
    [
      { tool: "bash", args: { command: SEARCH } },
      { tool: "read", args: { path: "src/lib/status.ts" } },
    ],
    "service03, service10, service17, service24, service31, service38, service45, service52 and service59 retry on 503.",
  );
  say("1. A run: the model searches and reads, then answers", "> Which services retry when the upstream answers 503?");
  await pi.prompt("Which services retry when the upstream answers 503?");
  const raw = toolResults(
    pi
      .projection()
      .entries.map((e: Loose) => e.sourceEntry.message)
      .filter(Boolean),
  );
  console.log(raw.map((m: Loose) => `  ${m.toolName} returned ${kb(textOf(m).length)}`).join("\n"));
  console.log(`  status bar: ${status(pi.status("context-guard"))}  (Pi is already waiting for you)`);
  // The judge works in the background while the answer is read; its edits go into the next prompt's first
  // request. The stand-in answers at once, so this is a moment, where a person reads for seconds.
  for (let i = 0; i < 500 && !/judged, to land next/.test(pi.status("context-guard") ?? ""); i++) await new Promise((r) => setTimeout(r, 10));
  console.log(`  a moment later: ${status(pi.status("context-guard"))}`);
  if (!/judged, to land next/.test(pi.status("context-guard") ?? "")) problems.push("the judge's answers did not come in the background");

  pi.script("You are welcome.");
  await pi.prompt("Thanks!");
  const sent = toolResults(pi.requests.at(-1)?.messages ?? []);
  const found = textOf(raw[0]);
  const seen = textOf(sent[0]);
  // The fixture's services 03, 10 … 59 retry on 503: a search that ran prints those lines.
  if (!found.includes("=== 503")) problems.push(`the search found nothing to distill (\`${SEARCH}\` printed: ${JSON.stringify(found.slice(0, 200))})`);
  else if (!seen.startsWith("[context-guard] Distilled") || seen.length >= found.length)
    problems.push(`the search was not distilled (the next request carried ${kb(seen.length)} of it, starting ${JSON.stringify(seen.slice(0, 120))})`);
  // Each output as the next request carried it, and what happened to it.
  const how = (m: Loose, i: number) => {
    const [now, was] = [textOf(m), textOf(raw[i])];
    if (now === was) return "whole, as the tool returned it";
    if (now.startsWith("[context-guard] Distilled")) return `distilled from ${kb(was.length)}: the lines the judge kept, verbatim, and notes for the rest`;
    if (now.startsWith("[context-guard] Removed")) return `in place of all ${kb(was.length)}, a one-line note: the judge found nothing the answer needs in it`;
    return `changed from ${kb(was.length)}`;
  };
  say(
    "2. What the next request carried instead",
    sent.map((m: Loose, i: number) => `  ${m.toolName}: ${kb(textOf(m).length)} (${how(m, i)})`).join("\n") +
      `\n\n  The search, as the model now sees it (first lines):\n${seen
        .split("\n")
        .slice(0, 8)
        .map((l: string) => `  │ ${fit(l)}`)
        .join("\n")}`,
  );

  pi.script((request) => {
    const id = RECALL.exec(textOf(toolResults(request.messages)[0]))?.[1] ?? "";
    return { tool: "recall", args: { entryId: id }, id: "recall1" };
  }, "Here is the full search again.");
  await pi.prompt("Show me the whole search output again.");
  const back = pi.branch().find((e: Loose) => e.type === "message" && e.message.toolCallId === "recall1");
  const recalled = textOf(back?.message);
  const identical = back !== undefined && recalled === found;
  // recall's result is a tool output too: what the window holds of it once the run has ended.
  const inWindow = textOf(
    pi
      .projection()
      .entries.flatMap((e: Loose) => e.messages ?? [])
      .find((m: Loose) => m?.toolCallId === "recall1"),
  );
  const again = inWindow.startsWith("[context-guard] Distilled")
    ? "  recall's own result is a tool output like any other: at this run's end the guard distilled it too,\n" +
      "  so /guard below counts three items kept out (the search, the read, the recall); the original\n" +
      "  stays in the session file, one recall away."
    : `  recall's own result stays in the window as it came (${kb(inWindow.length)}).`;
  say(
    "3. recall brings the original back",
    `  recall returned ${kb(recalled.length)}; identical to the original: ${identical}\n  status bar: ${status(pi.status("context-guard"))}\n${again}`,
  );
  if (!identical)
    problems.push(
      back ? `recall returned ${kb(recalled.length)}, not the original ${kb(found.length)} byte for byte` : "the model's recall call got no result",
    );

  say("4. /guard");
  await pi.prompt("/guard");
  console.log(pi.notifications.at(-1)?.message ?? "(no report)");

  say("5. /context");
  await pi.prompt("/context");
  console.log(pi.notifications.at(-1)?.message ?? "(no report)");
} finally {
  await pi.dispose();
}

if (problems.length === 0) {
  say("The story held: the search was distilled, and recall gave it back byte for byte.");
} else {
  console.error(`\n${rule}\nTHE DEMO FAILED\n${rule}\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  process.exitCode = 1;
}
