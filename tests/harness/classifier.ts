// Stand-in classifiers for the guard's tests.
//
// A behaviour is a function of the request Pi passes to the provider; the
// helpers below build the ones tests need: answers from a rule or a table, a
// provider error, a thrown error, a hang that never answers (and ignores abort),
// a late answer, and malformed answers.

export type Question =
  | { type: "bool"; instructions: string; criteria?: unknown }
  | { type: "choice"; instructions: string; criteria: Record<string, string> }
  | { type: "score"; instructions: string; criteria: string[] };

export interface ClassifyRequest {
  state: Record<string, unknown>;
  questions: Record<string, Question>;
  images?: unknown[];
}

export type Answer =
  | { type: "bool"; probability: number }
  | { type: "choice"; choice: string; probabilities: Record<string, number>; confidence: number }
  | Record<string, unknown>;

export interface ClassifyResult {
  answers: Record<string, Answer>;
  usage?: { input: number; output: number; totalTokens: number; cost: { total: number } };
  stopReason: "stop" | "error" | "aborted";
  errorMessage?: string;
}

export type Behaviour = (request: ClassifyRequest, signal: AbortSignal | undefined) => Promise<ClassifyResult>;

const usage = (input: number) => ({ input, output: 3, totalTokens: input + 3, cost: { total: input * 0.042e-6 } });

/** A bool answer. */
export const yes = (probability: number): Answer => ({ type: "bool", probability });

/** A choice answer that puts `p` on `choice` and spreads the rest over the other options. */
export function choose(question: Question, choice: string, p: number): Answer {
  const options = question.type === "choice" ? Object.keys(question.criteria) : [choice];
  const rest = options.length > 1 ? (1 - p) / (options.length - 1) : 0;
  const probabilities = Object.fromEntries(options.map((o) => [o, o === choice ? p : rest]));
  return { type: "choice", choice, probabilities, confidence: p };
}

/**
 * Answers every question with `rule(questionId, question, request)`, which returns
 * an Answer, a number (a bool probability, or for a choice the choice name is
 * needed, so return an Answer) or undefined to leave the question unanswered.
 */
export function answering(rule: (id: string, question: Question, request: ClassifyRequest) => Answer | number | undefined): Behaviour {
  return async (request) => {
    const answers: Record<string, Answer> = {};
    for (const [id, q] of Object.entries(request.questions)) {
      const a = rule(id, q, request);
      if (a === undefined) continue;
      answers[id] = typeof a === "number" ? yes(a) : a;
    }
    return { answers, usage: usage(JSON.stringify(request.state).length / 4), stopReason: "stop" };
  };
}

/**
 * The common run-end rule: keep_whole low, focus on the first kept chunk (or
 * `none` when `keep` is empty), chunk_N high exactly for N in `keep(request)`,
 * and small items / exchanges answered by `item(id, request)`.
 */
export function keepChunks(keep: (request: ClassifyRequest) => number[], item: (id: string, request: ClassifyRequest) => number = () => 0.9): Behaviour {
  return answering((id, q, request) => {
    const kept = keep(request);
    if (id === "keep_whole") return 0.05;
    if (id === "focus") return kept.length ? choose(q, `chunk_${kept[0]}`, 0.7) : choose(q, "none", 0.8);
    const m = /^chunk_(\d+)$/.exec(id);
    if (m) return kept.includes(Number(m[1])) ? 0.9 : 0.1;
    return item(id, request);
  });
}

/** Keeps chunks whose text contains `needle`. */
export const keepMatching = (needle: string | RegExp): Behaviour =>
  keepChunks((request) => {
    const chunks = (request.state.chunks ?? {}) as Record<string, string>;
    return Object.entries(chunks)
      .filter(([, text]) => (typeof needle === "string" ? text.includes(needle) : needle.test(text)))
      .map(([id]) => Number(id.replace("chunk_", "")));
  });

/** Judges every output whole: nothing is removed. */
export const keepEverything: Behaviour = answering((id, q) => {
  if (id === "keep_whole") return 0.95;
  if (id === "focus") return choose(q, "whole", 0.9);
  return 0.95;
});

/** A provider that reports an error. */
export const providerError =
  (message = "stand-in classifier: upstream error"): Behaviour =>
  async () => ({ answers: {}, stopReason: "error", errorMessage: message });

/** A provider that throws. */
export const throwing =
  (message = "stand-in classifier: connection reset"): Behaviour =>
  async () => {
    throw new Error(message);
  };

/** A provider that never answers and ignores abort. */
export const hanging: Behaviour = () => new Promise(() => {});

/** Answers with `inner` after `ms` milliseconds, whatever the deadline. */
export const late =
  (ms: number, inner: Behaviour = keepEverything): Behaviour =>
  async (request, signal) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return inner(request, signal);
  };

/**
 * Answers with `inner` after `ms` milliseconds, as a judge with that latency: an abort ends the wait at
 * once, as it ends a provider's request.
 */
export const slowJudge =
  (ms: number, inner: Behaviour): Behaviour =>
  (request, signal) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(inner(request, signal)), ms);
      signal?.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          reject(new Error("aborted"));
        },
        { once: true },
      );
    });

/** Malformed answers of one kind, for every question. */
export function malformed(kind: "missing" | "nan" | "out-of-range" | "unknown-choice" | "wrong-type"): Behaviour {
  return answering((id, q) => {
    switch (kind) {
      case "missing":
        return undefined;
      case "nan":
        return q.type === "choice" ? { type: "choice", choice: "none", probabilities: { none: Number.NaN }, confidence: Number.NaN } : Number.NaN;
      case "out-of-range":
        return q.type === "choice" ? choose(q, "none", 7) : id === "keep_whole" ? -3 : 4.5;
      case "unknown-choice":
        return q.type === "choice" ? { type: "choice", choice: "chunk_9999", probabilities: { chunk_9999: 0.99 }, confidence: 0.99 } : 0.1;
      case "wrong-type":
        return { type: "bool", probability: "high" };
    }
  });
}

/**
 * Registers the stand-in as Pi provider `fakejev`, model `jev-test` (a
 * classifier in Pi's catalog, found exactly as the guard finds Jev).
 */
export function registerStandInClassifier(
  pi: { registerProvider: (name: string, config: never) => void },
  classify: (
    model: { provider: string; id: string; api: string },
    context: ClassifyRequest,
    options?: { signal?: AbortSignal; timeoutMs?: number },
  ) => Promise<unknown>,
  contextWindow = 262_144,
): void {
  pi.registerProvider("fakejev", {
    baseUrl: "http://127.0.0.1:9",
    apiKey: "fake-key",
    models: [
      {
        type: "classifier",
        id: "jev-test",
        name: "Stand-in Jev",
        api: "fake-classify",
        input: ["text"],
        cost: { input: 0.042, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow,
      },
    ],
    classifiers: { "fake-classify": { classify } },
  } as never);
}
