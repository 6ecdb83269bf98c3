// A default timeout for every test, so that a hang fails as that test, by name.
//
// node --test --test-timeout=<ms> times each test file as a whole when files
// run in their own processes (the default): a hang then fails as the file, and
// the per-test flag never reaches the file's own tests (Node 22 reads it only
// in the runner). This preload, given to the runner with --import (its children
// inherit it), wraps node:test's `test` and `it` so that a test without its own
// `timeout` option gets CG_TEST_TIMEOUT_MS. With --test-force-exit the file's
// process then ends once its tests are done, even if the hung test left a
// handle open. Plain JavaScript, so any Node can preload it.
import { createRequire, syncBuiltinESMExports } from "node:module";

const ms = Number(process.env.CG_TEST_TIMEOUT_MS);

// Only inside a test file the runner started (it sets NODE_TEST_CONTEXT), not in the runner or in Pi.
if (ms > 0 && process.env.NODE_TEST_CONTEXT !== undefined) {
  const require = createRequire(import.meta.url);
  const nodeTest = require("node:test");
  const withTimeout = (original) => {
    const wrapped = function testWithTimeout(...args) {
      // test([name][, options][, fn]): find the options, or add them after the name.
      const at = args.findIndex((a) => a !== null && typeof a === "object");
      if (at >= 0) args[at] = { timeout: ms, ...args[at] };
      else args.splice(typeof args[0] === "string" ? 1 : 0, 0, { timeout: ms });
      return original.apply(this, args);
    };
    return Object.assign(wrapped, original);
  };
  nodeTest.test = withTimeout(nodeTest.test);
  nodeTest.it = withTimeout(nodeTest.it);
  // `import { test } from "node:test"` reads the wrapped functions from now on.
  syncBuiltinESMExports();
}
