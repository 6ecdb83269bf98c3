// A loopback server that speaks TypeSafe's System One protocol, as Pi's own
// HTTP client sends it for the default classifier (openrouter/~typesafe/jev-latest):
// POST {baseUrl}/systemone with a bearer key and { model, state, questions },
// `bool` questions on the wire as `noul`. Pointing Pi's openrouter provider at it
// (models.json) exercises the default model id, the credential check and Pi's
// real client end to end, offline.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface SystemOneCall {
  path: string;
  authorization: string | undefined;
  body: { model?: string; state?: Record<string, unknown>; questions?: Record<string, { type: string; criteria?: Record<string, string> }> };
}

export interface SystemOne {
  baseUrl: string;
  calls: SystemOneCall[];
  close: () => Promise<void>;
}

/**
 * How the service fails instead of answering: an HTTP 500 with an error body,
 * no response at all (the connection stays open), a 200 whose `answers` is
 * empty, or a 200 whose body is not JSON.
 */
export type SystemOneFailure = "http-500" | "hang" | "no-answers" | "not-json";

/**
 * The answers of a stand-in Jev that keeps the chunks holding `marker` and
 * nothing else: arguments for `startSystemOne`.
 */
export function keepChunksWith(
  marker: string,
): [p: (id: string, call: SystemOneCall) => number, choose: (id: string, options: string[], call: SystemOneCall) => string] {
  const chunksOf = (call: SystemOneCall) => (call.body.state?.chunks ?? {}) as Record<string, string>;
  return [
    (id, call) => (id === "keep_whole" ? 0.05 : chunksOf(call)[id]?.includes(marker) ? 0.9 : 0.1),
    (_id, options, call) => Object.entries(chunksOf(call)).find(([, text]) => text.includes(marker))?.[0] ?? (options.includes("none") ? "none" : options[0]),
  ];
}

/**
 * Answers every `noul` question with `p(id)` and every choice with
 * `choose(id, options)`, or fails every request as `failure` says.
 */
export async function startSystemOne(
  p: (id: string, call: SystemOneCall) => number,
  choose: (id: string, options: string[], call: SystemOneCall) => string,
  failure?: SystemOneFailure,
): Promise<SystemOne> {
  const calls: SystemOneCall[] = [];
  const read = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let data = "";
      req.setEncoding("utf8");
      req.on("data", (d) => {
        data += d;
      });
      req.on("end", () => resolve(data));
    });
  const server: Server = createServer(async (req, res) => {
    const call: SystemOneCall = { path: req.url ?? "", authorization: req.headers.authorization, body: JSON.parse(await read(req)) };
    calls.push(call);
    if (failure === "hang") return; // never answers; close() ends the connection
    if (failure === "http-500") {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "stand-in System One: internal error" } }));
      return;
    }
    if (failure === "not-json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("<html>502 Bad Gateway</html>");
      return;
    }
    const answers: Record<string, unknown> = {};
    for (const [id, q] of Object.entries(call.body.questions ?? {})) {
      if (q.type === "noul") answers[id] = { type: "noul", noul: p(id, call) };
      else if (q.type === "choice") {
        const options = Object.keys(q.criteria ?? {});
        const choice = choose(id, options, call);
        const probabilities = Object.fromEntries(options.map((o) => [o, o === choice ? 0.8 : 0.2 / Math.max(1, options.length - 1)]));
        answers[id] = { type: "choice", choice, probabilities, confidence: 0.8 };
      }
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ answers: failure === "no-answers" ? {} : answers, usage: { input_tokens: 1234, output_tokens: 5 } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // a hanging request's connection too
      }),
  };
}
