// What a session needs to talk to a loopback main model as one of Pi's own
// providers (anthropic-server.ts, openai-server.ts): the agent dir's
// models.json pointing the provider at the server (Pi's cache warming off, so
// no request the script did not plan), and, once the session is up,
// `select(pi)` to set the provider's key and switch the session to the
// catalog's model. `registry()` is the session's model registry (for other
// catalog models and their prices).
import { writeFileSync } from "node:fs";
import type { Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Loose } from "./pi.ts";
import type { PiSession, SessionOptions } from "./session.ts";

export interface Loopback {
  options: SessionOptions;
  select: (pi: PiSession) => Promise<void>;
  registry: () => Loose;
}

export function loopbackSession(o: {
  provider: string;
  baseUrl: string;
  keyVariable: string;
  key: string;
  model: string;
  api?: string;
  name: string;
}): Loopback {
  let registry: Loose;
  const options: SessionOptions = {
    beforeStart: (agentDir) => writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { [o.provider]: { baseUrl: o.baseUrl } } })),
    piSettings: { cacheWarming: "off" },
    extensions: [
      (pi: Loose) =>
        pi.on("session_start", (_event: unknown, ctx: Loose) => {
          registry = ctx.modelRegistry;
        }),
    ],
  };
  const select = async (pi: PiSession) => {
    process.env[o.keyVariable] = o.key;
    const model = registry?.find?.(o.provider, o.model);
    if (!model) throw new Error(`${o.name}: Pi's model registry has no ${o.provider}/${o.model}`);
    if (o.api && model.api !== o.api) throw new Error(`${o.name}: ${o.provider}/${o.model} uses ${model.api}; this server speaks only ${o.api}`);
    await pi.session.setModel(model);
    await pi.session.setThinkingLevel?.("off");
  };
  return { options, select, registry: () => registry };
}

/** Starts `server` on 127.0.0.1 at a free port: its `url` and a `close` that waits for it, beside `parts`. */
export async function listenLoopback<T extends object>(server: HttpServer, parts: T): Promise<T & { url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { ...parts, url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A loopback main model: what it got and what it answered. */
export interface LoopbackServer<Usage, Cache> {
  /** The server's root (`http://127.0.0.1:PORT`). */
  url: string;
  /** Every request body Pi sent that parsed as JSON, oldest first. */
  bodies: Loose[];
  /** Per body (same index), the usage the server reported for it. */
  usage: Usage[];
  /** The server's prompt cache (its clock, its entries). */
  cache: Cache;
  /** When each answer was sent (real `Date.now()`), where the server records it. */
  answered?: number[];
  /** Turns left unused in the script. */
  pendingSteps: () => number;
  close: () => Promise<void>;
}
