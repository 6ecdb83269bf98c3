// The offline demo: this package inside a real Pi session.
//
// Real: Pi's AgentSession, its tools (bash, read) on a real folder, its session
// manager, this package loaded by Pi's loader. Stand-ins (no network, no key):
// the main model is scripted, and the classifier is a local rule that plays
// Jev's part.
import { fixtureRepo } from "../tests/harness/fixture-repo.ts";
import { piVersion } from "../tests/harness/pi.ts";
import { startSession } from "../tests/harness/session.ts";

const rule = "─".repeat(72);
const say = (text: string) => console.log(`\n${rule}\n${text}\n${rule}`);

say(
  `pi-context-guard, offline demo, inside real Pi ${piVersion}.\n` +
    "STAND-INS: a scripted main model and a stand-in classifier. Everything else is real:\n" +
    "Pi's session, its bash and read tools on a real folder, and this package loaded by Pi.",
);

const pi = await startSession({
  files: fixtureRepo(),
  script: [
    { tool: "bash", args: { command: "rg -n status src" } },
    { tool: "read", args: { path: "src/lib/status.ts" } },
    "Three services retry on 503: service03, service10 and service17 (see `res.status === 503`).",
  ],
});
try {
  await pi.prompt("Which services retry when the upstream answers 503?");
  const calls = pi.projection().messages.filter((m: { role: string }) => m.role === "toolResult");
  console.log(`The scripted model ran ${calls.length} real tools; the last request carried ${pi.requests.at(-1)?.messages.length} messages.`);

  say("/context");
  await pi.prompt("/context");
  console.log(pi.notifications.at(-1)?.message ?? "(no report)");
} finally {
  await pi.dispose();
}
