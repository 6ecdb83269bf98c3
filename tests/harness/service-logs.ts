// Big service logs for the tests of distilling before Pi compacts, and the tool that prints them (Pi's
// built-in tools cap an output at 50 KB; these are hundreds of kilobytes).
import type { Loose } from "./pi.ts";

/** The line every service log holds now and then, the one the judge must keep. */
export const NEEDLE = "FATAL: disk quota exceeded on volume";

/** `size` characters of `name`'s log lines, a `NEEDLE` line every 600 lines (about every 50,000 characters). */
export function serviceLog(name: string, size: number): string {
  const lines: string[] = [];
  let chars = 0;
  for (let i = 0; chars < size; i++) {
    const line =
      i % 600 === 300
        ? `${name} ${String(i).padStart(6, "0")} ${NEEDLE} /data/${name}/${i}`
        : `${name} ${String(i).padStart(6, "0")} INFO worker ${i % 17} processed batch ${i * 7} in ${(i * 13) % 997} ms`;
    lines.push(line);
    chars += line.length + 1;
  }
  return lines.join("\n");
}

/** An inline extension: the `dump_log` tool, printing `log(service)` after `delayMs`. */
export const dumpLogTool =
  (log: (service: string) => string, delayMs = 0) =>
  (pi: Loose) => {
    pi.registerTool({
      name: "dump_log",
      label: "Dump log",
      description: "Prints a whole service log.",
      parameters: { type: "object", properties: { service: { type: "string" } }, required: ["service"] },
      async execute(_id: string, params: { service: string }) {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        return { content: [{ type: "text", text: log(params.service) }], details: {} };
      },
    });
  };
