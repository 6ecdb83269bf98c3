// `PI_DISABLED_EXTENSIONS`: a comma- or space-separated list of names that turn
// parts of this package off (`context`, `guard`, or `context-guard` for all).

/** Whether the list names any of `names` (case-insensitive). */
export function disabledBy(names: readonly string[], env: string | undefined = process.env.PI_DISABLED_EXTENSIONS): boolean {
  const listed = (env ?? "").split(/[\s,]+/).map((n) => n.trim().toLowerCase());
  return listed.some((n) => names.includes(n));
}
