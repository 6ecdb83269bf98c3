// Telling the user something, in every mode.
import { writeSync } from "node:fs";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

export type Level = "info" | "warning" | "error";

/**
 * In print mode Pi's `notify` is a no-op and Pi points `process.stdout` at
 * stderr, so an answer the user asked for (`pi -p "/context"`) goes straight to
 * file descriptor 1, and warnings and errors to 2. In json mode stdout is Pi's
 * event stream and nothing extra is written. Elsewhere it is a notification.
 */
export function say(ctx: ExtensionContext, text: string, level: Level): void {
  try {
    if (ctx.mode === "print" && !ctx.hasUI) {
      writeSync(level === "info" ? 1 : 2, `${text}\n`);
      return;
    }
    ctx.ui.notify(text, level);
  } catch {
    // Nowhere left to report to; the session is untouched.
  }
}
