// Shared pieces of the /context end-to-end tests: an inline extension that
// records every report the product emits on `pi.events`, injects custom
// messages, and a tiny PNG.
import type { Loose } from "../harness/pi.ts";

export const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** Every report /context built, newest last. */
export function recorder(): { reports: Loose[]; extension: (pi: Loose) => void; last: () => Loose } {
  const reports: Loose[] = [];
  return {
    reports,
    last: () => reports.at(-1),
    extension: (pi: Loose) => {
      pi.events.on("context:report", (r: Loose) => reports.push(r));
      // `/inject <type> <size>`: a custom message of that type with `size` characters of text.
      pi.registerCommand("inject", {
        handler: async (args: string) => {
          const [type = "note", size = "40"] = args.trim().split(/\s+/);
          pi.sendMessage({ customType: type, content: `${type}: ${"x".repeat(Number(size))}`, display: true });
        },
      });
    },
  };
}

/** Characters that must never reach a terminal raw (everything but a newline). */
export const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
