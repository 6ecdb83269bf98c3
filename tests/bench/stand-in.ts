// The benchmarks' stand-in classifier: answers every request of a pass at once,
// keeping the chunks whose text `hit` accepts (the first such chunk is the
// focus) and nothing else. The pass and checkpoint benches share it, so both
// paths of each bench finish from the same answers.
import type { GuardClassifierContext, PassAnswers } from "../../extension/guard/types.ts";

export function keepChunksWhere(requests: GuardClassifierContext[], hit: (text: string) => boolean): PassAnswers {
  const outcomes = requests.map((r) => {
    const answers: Record<string, unknown> = { keep_whole: { type: "bool", probability: 0.1 } };
    let focus = "none";
    for (const [key, text] of Object.entries(r.state.chunks)) {
      const kept = hit(text);
      if (kept && focus === "none") focus = key;
      answers[key] = { type: "bool", probability: kept ? 0.9 : 0.05 };
    }
    answers.focus = { type: "choice", choice: focus, probabilities: { [focus]: 0.7 }, confidence: 0.7 };
    return { status: "answered" as const, answers, inputTokens: 8000, costUsd: 0.0001 };
  });
  return { outcomes, timedOut: false, ms: 900 };
}
