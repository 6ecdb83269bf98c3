// The `recall` tool: the original of a distilled output (or of an omitted
// exchange), read back from the session's raw entry, which `context_edit`
// never changes (docs/GUARD.md "`recall`"). Whole, by pattern, or by range:
// the core answers; this file reads the entry and hands back its images.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { callCore } from "../core.ts";
import { exchangeSource } from "./collect.ts";
import { guardCore } from "./wasm.ts";

export function registerRecall(pi: ExtensionAPI): void {
  const info = callCore(() => guardCore.recallToolInfo());
  if (!info.ok) return;
  pi.registerTool({
    name: "recall",
    label: "Recall",
    description: info.value.description,
    parameters: Type.Object({
      entryId: Type.String({ description: info.value.entryId }),
      pattern: Type.Optional(Type.String({ description: info.value.pattern })),
      offset: Type.Optional(Type.Integer({ description: info.value.offset })),
      limit: Type.Optional(Type.Integer({ description: info.value.limit })),
    }),
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      const entry = ctx.sessionManager.getEntry(params.entryId) as { type?: string; message?: { content?: unknown } } | undefined;
      const message = entry?.type === "message" ? entry.message : undefined;
      // A user prompt recalls its exchange: exactly the omitted entries when a record
      // names it, else the transcript up to the next prompt (docs/GUARD.md "`recall`").
      const exchange =
        (message as { role?: string } | undefined)?.role === "user" ? exchangeSource(ctx.sessionManager.getBranch() as never, params.entryId) : undefined;
      const reply = callCore(() => guardCore.recall({ ...params, message, exchange }));
      if (!reply.ok) throw new Error(`recall failed: ${reply.error}`);
      if (reply.value.isError) throw new Error(reply.value.text);
      const blocks = Array.isArray(message?.content) ? (message.content as { type: string }[]) : [];
      const images = reply.value.images.map((i) => blocks[i]).filter((b) => b?.type === "image");
      for (const [at, block] of reply.value.exchangeImages ?? []) {
        const source = at === 0 ? message : exchange?.entries[at - 1]?.message;
        const content = (source as { content?: unknown } | undefined)?.content;
        const image = Array.isArray(content) ? (content[block] as { type: string } | undefined) : undefined;
        if (image?.type === "image") images.push(image);
      }
      return {
        content: [{ type: "text" as const, text: reply.value.text }, ...(images as never[])],
        details: { entryId: params.entryId, images: images.length },
      };
    },
  });
}
