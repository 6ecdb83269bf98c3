// Small readers for what a session holds and what a request carried.
import type { Loose } from "./pi.ts";

/** The text of a message's content (string or blocks), text blocks joined by newlines. */
export function textOf(message: Loose): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b: Loose) => b?.type === "text")
    .map((b: Loose) => b.text)
    .join("\n");
}

/** Tool-result messages of a request (or projection), in order. */
export function toolResults(messages: Loose[]): Loose[] {
  return messages.filter((m) => m?.role === "toolResult");
}

/** Entries of a type (and custom type) on a branch. */
export function entriesOf(branch: Loose[], type: string, customType?: string): Loose[] {
  return branch.filter((e) => e.type === type && (customType === undefined || e.customType === customType));
}

/** The session entry that holds the tool result of a call id. */
export function toolResultEntry(branch: Loose[], toolCallId: string): Loose {
  return branch.find((e) => e.type === "message" && e.message?.role === "toolResult" && e.message.toolCallId === toolCallId);
}
