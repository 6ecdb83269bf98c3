// The offline demo: this package inside a real Pi session.
//
// Real: Pi's AgentSession, its tools (bash, read) on a real folder, its session
// manager, this package loaded by Pi's loader. Stand-ins (no network, no key):
// the main model is scripted, and the classifier is a local rule that plays
// Jev's part (it keeps the chunks that mention "=== 503").
import { keepMatching } from "../tests/harness/classifier.ts";
import { fixtureRepo } from "../tests/harness/fixture-repo.ts";
import { textOf, toolResults } from "../tests/harness/inspect.ts";
import { type Loose, piVersion } from "../tests/harness/pi.ts";
import { startSession } from "../tests/harness/session.ts";

const rule = "─".repeat(78);
const say = (title: string, body = "") => console.log(`\n${rule}\n${title}\n${rule}${body ? `\n${body}` : ""}`);
const kb = (n: number) => `${(n / 1000).toFixed(1)}k chars`;
const RECALL = /recall\(\{"entryId":"([^"]+)"\}\)/;

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
      { tool: "bash", args: { command: "rg -n status src/services" } },
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
  say(
    "2. What the next request carried instead",
    sent.map((m: Loose) => `  ${m.toolName}: ${kb(textOf(m).length)}`).join("\n") +
      `\n\n  The search, as the model now sees it (first lines):\n${textOf(sent[0]).split("\n").slice(0, 8).map((l: string) => `  │ ${l.slice(0, 110)}`).join("\n")}`,
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
  const original = textOf(raw[0]);
  say(
    "3. recall brings the original back",
    `  recall returned ${kb(textOf(back.message).length)}; identical to the original: ${textOf(back.message) === original}`,
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
