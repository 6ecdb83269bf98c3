// pi-context-guard: the Pi extension's entry point.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { auditCommand, savedSessionRuns } from "./audit/in-pi.ts";
import { registerReport } from "./report/index.ts";
import { keptOut } from "./guard/figures.ts";
import { registerGuard } from "./guard/index.ts";

export default function contextGuard(pi: ExtensionAPI): void {
  // The report shows what the guard keeps out; it gets the figures as a function, so it imports nothing of the guard.
  registerReport(pi, { keptOut });
  // `/guard audit` is the audit's own module, handed over the same way, and so are the project's saved
  // sessions' run lengths, read by the audit's reader for the checkpoints' estimator of later requests.
  registerGuard(pi, { audit: (args, ctx, say) => auditCommand(pi, args, ctx, say), savedRuns: savedSessionRuns() });
}
