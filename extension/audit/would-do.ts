// What the guard would do on a branch (issue 11 point 3): the branch
// projected by Pi's own `buildSessionProjection` (inside Pi, or the Pi found
// on this machine; with no Pi anywhere, by projection.ts), read into the guard's
// entries by the guard's own `coreEntries`, and sent to the core once
// (`auditCandidates`, crates/guard-read/src/audit.rs), which applies the
// pass's candidate rules at every run end and the rewrite measure of the
// session's main model. Nothing is decided here: this only sums.
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import * as wasm from "../../pkg/context_guard.js";
import { callCore } from "../core.ts";
import { coreEntries, type ProjectedEntry } from "../guard/collect.ts";
import { guardCore } from "../guard/wasm.ts";
import { branchProjection } from "./projection.ts";
import type { Branch } from "./read.ts";

export interface Candidate {
  kind: "large" | "small" | "exchange" | "image";
  entryId: string;
  tool: string;
  label: string;
  /** Characters its edit could keep out of the context (an image: its size minus the stub's). */
  chars: number;
  /** Characters the provider writes to its cache again when this is the earliest edit (guard/cache.rs). */
  rewriteChars: number;
  basis: string;
  superseded: boolean;
  /** The run end (0-based) where it is first a candidate. */
  run: number;
}

export interface WouldDo {
  runs: number;
  /** Whose projection of the branch it was measured on: the Pi found (`pi`) or this package's own (`own`, projection.ts). */
  projection: "pi" | "own";
  /** How the main model caches: `prefix`, `anthropic` or `openai-codex`. */
  cache: string;
  /** Old images: removed with no classifier (the lower bound). */
  lower: { items: number; chars: number };
  /**
   * Every output and image candidate removed whole (the upper bound of what a classifier could remove).
   * Old exchanges are not in it: an exchange holds its own run's outputs, so they are in `byKind.exchange` only.
   */
  upper: { items: number; chars: number; superseded: number; supersededChars: number };
  byKind: Record<string, { items: number; chars: number; rewriteChars: number }>;
  candidates: Candidate[];
}

export type Projection = (entries: unknown[], leafId?: string | null) => { entries: ProjectedEntry[] };
let projection: Promise<Projection | string | undefined> | undefined;

/** Said once when no Pi is found and the audit's own projection is used. */
export const OWN_PROJECTION =
  "no Pi found (neither `pi` on PATH nor a Pi package beside this one): 'guard would' is measured on this package's own projection of each branch (compactions and context edits applied as Pi 1.3–1.6 apply them)";

/**
 * Pi's projection, from the Pi the user has (issue 19): the `pi` command on
 * `PATH`, followed to its package folder, else a Pi package that Node
 * resolves from here (a checkout with its dev dependencies).
 * `pi install` puts no Pi beside an extension (host packages are peers), so
 * nothing here may need one: without a Pi the value is undefined, and a Pi
 * that cannot project is the sentence to say.
 */
function piProjection(): Promise<Projection | string | undefined> {
  projection ??= (async () => {
    const found = (await piOnPath()) ?? (await import("@earendil-works/pi-coding-agent").catch(() => undefined));
    if (!found) return undefined;
    const build = (found as { buildSessionProjection?: Projection }).buildSessionProjection;
    return typeof build === "function" ? build : "this Pi has no buildSessionProjection (Pi 1.3.0 or newer is needed)";
  })();
  return projection;
}

/** The module of the Pi package whose `pi` command is on `PATH`, or undefined. */
async function piOnPath(): Promise<unknown> {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const command = dir && join(dir, "pi");
    if (!command || !existsSync(command)) continue;
    // The command is a link into the package (npm's bin); its package.json names it.
    for (let at = dirname(realpathSync(command)); at !== dirname(at); at = dirname(at)) {
      const manifest = join(at, "package.json");
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; exports?: { ".": { import?: string } }; main?: string };
      if (pkg.name !== "@earendil-works/pi-coding-agent") break;
      const entry = pkg.exports?.["."]?.import ?? pkg.main;
      return entry ? import(pathToFileURL(join(at, entry)).href).catch(() => undefined) : undefined;
    }
  }
  return undefined;
}

const utf8 = new TextEncoder();

/**
 * What the guard would do on `branch`, measured on `given` (Pi's projection, inside Pi), else on the Pi
 * found on this machine, else on the audit's own projection when no Pi is found at all.
 */
export async function wouldDo(
  branch: Branch,
  model: { provider: string; api: string } | undefined,
  given?: Projection,
): Promise<{ ok: true; value: WouldDo } | { ok: false; error: string }> {
  const found = given ?? (await piProjection());
  if (typeof found === "string") return { ok: false, error: found };
  const projected = found ? found(branch.entries, branch.leafId ?? null).entries : branchProjection(branch.entries).entries;
  const settings = callCore(() => guardCore.parseSettings(""));
  if (!settings.ok) return settings;
  const input = {
    entries: coreEntries(projected),
    settings: settings.value.settings,
    classifier: true,
    model: { provider: model?.provider ?? "", api: model?.api ?? "", pin: settings.value.settings.pinAnthropicCache },
  };
  const result = callCore(
    () =>
      JSON.parse(wasm.auditCandidates(utf8.encode(JSON.stringify(input)), branch.texts, branch.lengths)) as {
        runs: number;
        cache: string;
        candidates: Candidate[];
      },
  );
  if (!result.ok) return result;
  const { runs, cache, candidates } = result.value;
  const out: WouldDo = {
    runs,
    projection: found ? "pi" : "own",
    cache,
    lower: { items: 0, chars: 0 },
    upper: { items: 0, chars: 0, superseded: 0, supersededChars: 0 },
    byKind: {},
    candidates,
  };
  for (const c of candidates) {
    const k = (out.byKind[c.kind] ??= { items: 0, chars: 0, rewriteChars: 0 });
    k.items++;
    k.chars += c.chars;
    k.rewriteChars += c.rewriteChars;
    if (c.kind === "exchange") continue;
    out.upper.items++;
    out.upper.chars += c.chars;
    if (c.superseded) {
      out.upper.superseded++;
      out.upper.supersededChars += c.chars;
    }
    if (c.kind === "image") {
      out.lower.items++;
      out.lower.chars += c.chars;
    }
  }
  return { ok: true, value: out };
}
