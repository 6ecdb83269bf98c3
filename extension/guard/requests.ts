// Runs a pass's classifier requests: at most `concurrency` in flight, all of
// them inside one time budget.
//
// When the budget runs out nothing new starts, running requests are aborted,
// and each is raced against the deadline, so a provider that ignores abort
// cannot hold up Pi's settling. An answer that comes after the deadline is
// ignored. Every request ends as answered, error or timeout; the core decides
// what each means (an unanswered request keeps its content).

/** What Pi's `classify` takes and gives, as far as the pass uses it. */
export interface ClassifierContext {
  state: object;
  questions: object;
}
export interface ClassifierResult {
  answers?: Record<string, unknown>;
  /** A chat model's reply to the judge's prompt (guard/judge.ts), read by the core instead of `answers`. */
  reply?: string;
  usage?: { input?: number; output?: number; cost?: { total?: number } };
  stopReason?: string;
  errorMessage?: string;
}
export type Classify = (context: ClassifierContext, options: { signal: AbortSignal; timeoutMs: number; maxRetries: number }) => Promise<ClassifierResult>;

export type RequestOutcome =
  | { status: "answered"; answers: Record<string, unknown>; inputTokens: number; costUsd: number }
  | { status: "replied"; text: string; inputTokens: number; costUsd: number }
  | { status: "error"; message: string }
  | { status: "timeout" };

export interface RunResult {
  outcomes: RequestOutcome[];
  timedOut: boolean;
  ms: number;
}

/**
 * Judge requests in flight across passes (issue 27): a pass in the background and a new one share
 * `concurrency` slots. `take` waits for a free slot (false once `signal` aborts); `give` frees one.
 */
export class Slots {
  private used = 0;
  private queue: (() => void)[] = [];
  size: number;
  constructor(size: number) {
    this.size = size;
  }

  async take(signal: AbortSignal): Promise<boolean> {
    while (this.used >= Math.max(1, this.size)) {
      if (signal.aborted) return false;
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          this.queue = this.queue.filter((w) => w !== wake);
          resolve();
        };
        this.queue.push(wake);
        signal.addEventListener("abort", wake, { once: true });
      });
    }
    if (signal.aborted) return false;
    this.used++;
    return true;
  }

  give(): void {
    this.used = Math.max(0, this.used - 1);
    this.queue.shift()?.();
  }

  /** Requests in flight now. */
  get inFlight(): number {
    return this.used;
  }
}

/** Runs every request; the outcomes are in the order of `requests`. */
export async function runRequests(
  requests: ClassifierContext[],
  classify: Classify,
  options: { concurrency: number; timeoutMs: number; signal?: AbortSignal; slots?: Slots },
): Promise<RunResult> {
  const started = Date.now();
  if (options.slots) options.slots.size = options.concurrency;
  const outcomes: RequestOutcome[] = requests.map(() => ({ status: "timeout" }));
  const abort = new AbortController();
  const onParentAbort = () => abort.abort();
  options.signal?.addEventListener("abort", onParentAbort, { once: true });
  // A signal aborted before the call never fires its event: nothing may start then.
  if (options.signal?.aborted) abort.abort();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"deadline">((resolve) => {
    timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
      resolve("deadline");
    }, options.timeoutMs);
  });
  const aborted = new Promise<"deadline">((resolve) => abort.signal.addEventListener("abort", () => resolve("deadline"), { once: true }));

  let next = 0;
  const worker = async () => {
    while (next < requests.length && !abort.signal.aborted) {
      const index = next++;
      if (options.slots && !(await options.slots.take(abort.signal))) return;
      const call = classify(requests[index], { signal: abort.signal, timeoutMs: options.timeoutMs, maxRetries: 1 }).then(
        (result) => toOutcome(result),
        (error: unknown) => ({ status: "error", message: error instanceof Error ? error.message : String(error) }) as RequestOutcome,
      );
      const settled = await Promise.race([call, deadline, aborted]).finally(() => options.slots?.give());
      if (settled !== "deadline") outcomes[index] = settled;
    }
  };
  try {
    const workers = Array.from({ length: Math.max(1, Math.min(options.concurrency, requests.length)) }, worker);
    await Promise.race([Promise.all(workers), deadline, aborted]);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onParentAbort);
    abort.abort();
  }
  return { outcomes, timedOut, ms: Date.now() - started };
}

function toOutcome(result: ClassifierResult | undefined): RequestOutcome {
  if (result?.stopReason !== "stop") {
    return { status: "error", message: result?.errorMessage ?? `classifier stopped: ${result?.stopReason ?? "no result"}` };
  }
  const input = Number(result.usage?.input);
  const cost = Number(result.usage?.cost?.total);
  const usage = { inputTokens: Number.isFinite(input) ? input : 0, costUsd: Number.isFinite(cost) ? cost : 0 };
  if (typeof result.reply === "string") return { status: "replied", text: result.reply, ...usage };
  return {
    status: "answered",
    answers: result.answers && typeof result.answers === "object" ? result.answers : {},
    inputTokens: Number.isFinite(input) ? input : 0,
    costUsd: Number.isFinite(cost) ? cost : 0,
  };
}
