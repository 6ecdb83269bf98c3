// Timing two or more paths of one step side by side: each round times one
// call of every function in turn, so a machine's slow spell falls on all of
// them alike and their ratio stays the ratio (issue 17: the check gates on it).

/** Medians of `samples` rounds, each timing one call of every function in turn, after `warm` such rounds. */
export function alternatingMedians(fns: (() => unknown)[], warm = 5, samples = 101): number[] {
  for (let i = 0; i < warm; i++) for (const f of fns) f();
  const times = fns.map((): number[] => []);
  for (let i = 0; i < samples; i++) {
    fns.forEach((f, k) => {
      const t = performance.now();
      f();
      times[k].push(performance.now() - t);
    });
  }
  return times.map((t) => t.sort((a, b) => a - b)[Math.floor(samples / 2)]);
}
