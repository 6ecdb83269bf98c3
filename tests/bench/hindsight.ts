// The hindsight bound of the economy suite (issue 20): given a recorded run
// (guard off) and what the judge made of each tool output, the cheapest
// schedule of mid-run checkpoints any rule could have chosen, and the lowest
// peak among schedules that cost at most a given multiple of guard off.
//
// It is a simulation, not a measurement: the run is replayed through a
// simple prefix-cache model, the same for every schedule, default included:
//
// - a request is its messages in order, each worth Pi's estimate of it
//   (tokens), plus a fixed part (system prompt, tools);
// - a request reads from the cache the part it shares with the request
//   before it (everything, unless a checkpoint edited something in between;
//   then everything before the first edited message) at the read price, and
//   pays the rest at the write price (Anthropic's cache write; OpenAI has no
//   write premium, so its input price). Minimum lengths, 128-token steps,
//   breakpoints and TTLs are left out;
// - a checkpoint after request c replaces every output old enough
//   (`midRunMinAgeTurns`) and not yet replaced by its judged size; the batch
//   is always everything eligible (the search is over when, not over which).
//
// The search is exact under that model: the context of a request depends only
// on the last checkpoint before it, so a dynamic programme over (request, last
// checkpoint) finds the cheapest schedule among all 2^(N-1) in O(N²) states;
// the lowest peak under a cost limit is the smallest peak P for which the
// cheapest schedule keeping every request at most P stays within the limit
// (the candidates for P are the requests' sizes under each state, bisected:
// a higher P allows every schedule a lower one does).

/** One tool output of the recorded run. */
export interface Output {
  /** Index of the message in every request that holds it (requests only grow without the guard). */
  message: number;
  /** The request it first appears in (0-based). */
  request: number;
  /** Its tokens as recorded, and as the judge left it. */
  tokens: number;
  judged: number;
}

export interface Recorded {
  /** Per request (0-based), the tokens of each message in order (the guard-off run: each request extends the one before). */
  messages: number[][];
  /** Tokens of each request beyond its messages (system prompt, tools). */
  fixed: number;
  outputs: Output[];
}

export interface Prices {
  /** Dollars per million tokens. */
  read: number;
  write: number;
}

export interface Schedule {
  /** Requests (0-based) after which a checkpoint runs. */
  checkpoints: number[];
  cost: number;
  peak: number;
  /** Per request, its tokens. */
  context: number[];
}

/** Whether output `o` may be edited at a checkpoint after request `c` with age gate `age` (turns). */
const eligibleAt = (o: Output, c: number, age: number) => c - (o.request - 1) >= age;

/** The tokens of request `i` when the last checkpoint before it ran after request `last` (-1: none). */
function contextOf(r: Recorded, i: number, last: number, age: number): number {
  let n = r.fixed;
  for (const t of r.messages[i]) n += t;
  if (last >= 0) for (const o of r.outputs) if (o.request <= i && eligibleAt(o, last, age)) n -= o.tokens - o.judged;
  return n;
}

/** The tokens request `i` shares with request `i − 1` when the last checkpoint before `i − 1` was `before` and before `i` is `last`. */
function sharedPrefix(r: Recorded, i: number, before: number, last: number, age: number): number {
  if (i === 0) return 0;
  const previous = contextOf(r, i - 1, before, age);
  if (last === before) return previous;
  // A checkpoint after request i − 1: everything before the first newly edited message is shared.
  const edited = r.outputs.filter(
    (o) => o.request <= i - 1 && eligibleAt(o, last, age) && !(before >= 0 && eligibleAt(o, before, age)) && o.tokens !== o.judged,
  );
  if (edited.length === 0) return previous;
  const first = Math.min(...edited.map((o) => o.message));
  let n = r.fixed;
  const messages = r.messages[i - 1];
  for (let m = 0; m < first && m < messages.length; m++) {
    const o = r.outputs.find((x) => x.message === m);
    n += o && before >= 0 && eligibleAt(o, before, age) ? o.judged : messages[m];
  }
  return n;
}

/** The cost (dollars) of request `i` under the model. */
function requestCost(r: Recorded, p: Prices, i: number, before: number, last: number, age: number): number {
  const context = contextOf(r, i, last, age);
  const shared = Math.min(context, sharedPrefix(r, i, before, last, age));
  return (shared * p.read + (context - shared) * p.write) / 1e6;
}

/** A given schedule replayed through the model. */
export function replay(r: Recorded, p: Prices, checkpoints: readonly number[], age: number): Schedule {
  let cost = 0;
  let peak = 0;
  const context: number[] = [];
  let last = -1;
  for (let i = 0; i < r.messages.length; i++) {
    const before = last;
    if (checkpoints.includes(i - 1)) last = i - 1;
    cost += requestCost(r, p, i, before, last, age);
    const c = contextOf(r, i, last, age);
    context.push(c);
    peak = Math.max(peak, c);
  }
  return { checkpoints: [...checkpoints], cost, peak, context };
}

/** The cheapest schedule keeping every request at or under `limit` tokens (Infinity: no limit); undefined when none can. */
export function cheapest(r: Recorded, p: Prices, age: number, limit = Infinity): Schedule | undefined {
  const n = r.messages.length;
  // best[last + 1]: the least cost so far with the last checkpoint after request `last`, and how.
  let best: ({ cost: number; checkpoints: number[] } | undefined)[] = [{ cost: 0, checkpoints: [] }];
  for (let i = 0; i < n; i++) {
    const next: typeof best = new Array(i + 1).fill(undefined);
    best.forEach((state, k) => {
      if (!state) return;
      const before = k - 1;
      // No checkpoint after request i − 1, or one (only from the second request on).
      const options = i === 0 ? [before] : [before, i - 1];
      for (const last of options) {
        if (contextOf(r, i, last, age) > limit) continue;
        const cost = state.cost + requestCost(r, p, i, before, last, age);
        const slot = last + 1;
        if (!next[slot] || cost < next[slot]!.cost) next[slot] = { cost, checkpoints: last === before ? state.checkpoints : [...state.checkpoints, last] };
      }
    });
    best = next;
  }
  const done = best.filter((s) => s !== undefined).sort((a, b) => a!.cost - b!.cost)[0];
  return done ? replay(r, p, done.checkpoints, age) : undefined;
}

/** The lowest peak among schedules costing at most `maxCost` dollars, with that schedule. */
export function lowestPeak(r: Recorded, p: Prices, age: number, maxCost: number): Schedule | undefined {
  const sizes = new Set<number>();
  for (let i = 0; i < r.messages.length; i++) for (let last = -1; last < i; last++) sizes.add(contextOf(r, i, last, age));
  // A higher limit allows every schedule a lower one does, so "within the cost" is monotone in it: bisect.
  const limits = [...sizes].sort((a, b) => a - b);
  let found: Schedule | undefined;
  let [lo, hi] = [0, limits.length - 1];
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = cheapest(r, p, age, limits[mid]);
    if (s && s.cost <= maxCost + 1e-12) {
      found = s;
      hi = mid - 1;
    } else lo = mid + 1;
  }
  return found;
}
