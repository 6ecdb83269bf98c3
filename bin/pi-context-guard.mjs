#!/usr/bin/env node
// The `pi-context-guard` command (package.json `bin`). The package is written
// in TypeScript that Node runs by stripping types; Node refuses to do that for
// files under node_modules (where an install puts this package), so a module
// hook strips this package's own .ts files with Node's `stripTypeScriptTypes`.
import module from "node:module";

// Node older than package.json's `engines` (22.18: it strips TypeScript types)
// cannot run the command at all: say so in one sentence, not a stack trace.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(`pi-context-guard needs Node.js 22.18 or newer (Pi 1.6 needs 22.19); this is Node.js ${process.versions.node}.`);
  process.exit(2);
}

const here = new URL("../", import.meta.url).href;
if (typeof module.registerHooks === "function" && typeof module.stripTypeScriptTypes === "function") {
  // stripTypeScriptTypes warns once that it is experimental; the warning is not the user's concern.
  const emit = process.emitWarning;
  process.emitWarning = (w, ...rest) => (String(w).includes("stripTypeScriptTypes") ? undefined : emit.call(process, w, ...rest));
  module.registerHooks({
    load(url, context, next) {
      if (url.startsWith(here) && url.endsWith(".ts") && url.includes("/node_modules/")) {
        const source = next(url, { ...context, format: "module" }).source;
        return { format: "module", source: module.stripTypeScriptTypes(String(source)), shortCircuit: true };
      }
      return next(url, context);
    },
  });
}

const { main } = await import("../extension/audit/cli.ts");
process.exitCode = await main(process.argv.slice(2));
