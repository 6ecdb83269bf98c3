// pi-context-guard: the Pi extension's entry point.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { estimateTokens } from "@earendil-works/pi-coding-agent";
import { callCore, core, coreLoadMs } from "./core.ts";

export default function contextGuard(pi: ExtensionAPI): void {
  pi.registerCommand("context", {
    description: "Show where the context window goes",
    handler: async (_args, ctx) => {
      const messages = ctx.sessionManager.buildSessionProjection().messages;
      const digests = messages.map((m) => ({ role: m.role, tokens: estimateTokens(m) }));
      const tally = callCore(() => core.tallyByRole(digests));
      if (!tally.ok) {
        ctx.ui.notify(`context: the core failed: ${tally.error}`, "error");
        return;
      }
      const lines = [
        `context-guard core ${core.version()} (loaded in ${coreLoadMs.toFixed(1)} ms)`,
        ...tally.value.map((t) => `${t.role}: ${t.messages} messages, ${t.tokens} tokens`),
      ];
      ctx.ui.notify(lines.join("\n"), "info");
    },
  });
}
