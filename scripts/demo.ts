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
const RECALL = /recall\(\{"entryId":"([^"]+)"\}\)/;
const SEARCH = "grep -rn status src/services";
/** What went wrong with the story, in the reader's words; empty when it held. */
const problems: string[] = [];

say(
  `pi-context-guard — offline demo inside real Pi ${piVersion}`,
  "STAND-INS: the main model is scripted and the classifier is a local rule playing Jev's part.\n" +
    "Everything else is real: Pi's session, its bash and read tools on a generated project, and this\n" +
    "package loaded by Pi's own loader.",
);

const pi = await startSession({ files: fixtureRepo(), classifier: keepMatching("=== 503") });
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
  const raw = toolResults(pi.projection().entries.map((e: Loose) => e.sourceEntry.message).filter(Boolean));
  console.log(raw.map((m: Loose) => `  ${m.toolName} returned ${kb(textOf(m).length)}`).join("\n"));
  console.log(`  status bar: ${pi.status("context-guard")}`);

  pi.script("You are welcome.");
  await pi.prompt("Thanks!");
  const sent = toolResults(pi.requests.at(-1)?.messages ?? []);
  const found = textOf(raw[0]);
  const seen = textOf(sent[0]);
  // The fixture's services 03, 10 … 59 retry on 503: a search that ran prints those lines.
  if (!found.includes("=== 503")) problems.push(`the search found nothing to distill (\`${SEARCH}\` printed: ${JSON.stringify(found.slice(0, 200))})`);
  else if (!seen.startsWith("[context-guard] Distilled") || seen.length >= found.length)
    problems.push(`the search was not distilled (the next request carried ${kb(seen.length)} of it, starting ${JSON.stringify(seen.slice(0, 120))})`);
  say(
    "2. What the next request carried instead",
    sent.map((m: Loose) => `  ${m.toolName}: ${kb(textOf(m).length)}`).join("\n") +
      `\n\n  The search, as the model now sees it (first lines):\n${seen.split("\n").slice(0, 8).map((l: string) => `  │ ${l.slice(0, 110)}`).join("\n")}`,
  );

  pi.script(
    (request) => {
      const id = RECALL.exec(textOf(toolResults(request.messages)[0]))?.[1] ?? "";
      return { tool: "recall", args: { entryId: id }, id: "recall1" };
    },
    "Here is the full search again.",
  );
  await pi.prompt("Show me the whole search output again.");
  const back = pi.branch().find((e: Loose) => e.type === "message" && e.message.toolCallId === "recall1");
  const recalled = textOf(back?.message);
  const identical = back !== undefined && recalled === found;
  say("3. recall brings the original back", `  recall returned ${kb(recalled.length)}; identical to the original: ${identical}`);
  if (!identical) problems.push(back ? `recall returned ${kb(recalled.length)}, not the original ${kb(found.length)} byte for byte` : "the model's recall call got no result");

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
