// Records every network connection this process opens or resolves a name for.
//
// Loaded in-process by a test (`import "…/connect-recorder.mjs"`) or into a
// child with NODE_OPTIONS=--import=<this file's URL>. Plain JavaScript, not
// TypeScript, so any Node a test starts can preload it.
//
// What it sees: every net.Socket connect (TCP, and TLS, HTTP, HTTPS and fetch,
// which all open their sockets through it), every dgram send or connect, and
// every dns lookup or resolve; and, once, that the process started with it.
// It records and never blocks: a test reads the
// records and judges (tests/harness/network.ts). Records go to an in-memory
// list (globalThis[Symbol.for("cg.connects")]) and, when CG_CONNECT_LOG names
// a file, as JSON lines appended to it, so the children of a test (and of the
// whole suite) can be checked too.
import { appendFileSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";

const require = createRequire(import.meta.url);
const net = require("node:net");
const dgram = require("node:dgram");
const dns = require("node:dns");

const key = Symbol.for("cg.connects");

if (!globalThis[key]) {
  const records = [];
  globalThis[key] = records;
  const log = process.env.CG_CONNECT_LOG;
  const script = process.argv[1] ?? "";

  const record = (kind, target) => {
    const entry = { kind, ...target, pid: process.pid, script };
    records.push(entry);
    if (log) {
      try {
        appendFileSync(log, `${JSON.stringify(entry)}\n`);
      } catch {
        // The log's folder is gone (the test ended); the in-memory list still has it.
      }
    }
  };

  // A process that loaded the recorder says so: a check can then tell "no
  // connection" from "no recorder" (Pi children must show up).
  record("start", {});

  // net.Socket#connect(options | port, host | path | [normalized args]).
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function recordedConnect(...args) {
    try {
      let first = args[0];
      if (Array.isArray(first)) first = first[0]; // net.connect passes its normalized arguments
      if (first && typeof first === "object") {
        // Node's http agents pass `path: null` with a host and port: only a path that is there is a Unix socket.
        if (first.path != null) record("connect", { path: String(first.path) });
        else record("connect", { host: first.host ?? "localhost", port: Number(first.port) });
      } else if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
        record("connect", { host: typeof args[1] === "string" ? args[1] : "localhost", port: Number(first) });
      } else if (typeof first === "string") {
        record("connect", { path: first });
      } else {
        record("connect", { host: "(unknown)", port: 0 });
      }
    } catch {
      // Never break the caller's connect over a record.
    }
    return connect.apply(this, args);
  };

  const send = dgram.Socket.prototype.send;
  dgram.Socket.prototype.send = function recordedSend(...args) {
    // send(msg, [offset, length,] port, address, cb): the port is the first number after msg (and offset/length).
    const numbers = args.slice(1).filter((a) => typeof a === "number");
    const address = args.slice(1).find((a) => typeof a === "string");
    record("udp", { host: address ?? "localhost", port: numbers.length >= 3 ? numbers[2] : (numbers[0] ?? 0) });
    return send.apply(this, args);
  };
  const udpConnect = dgram.Socket.prototype.connect;
  dgram.Socket.prototype.connect = function recordedUdpConnect(port, address, ...rest) {
    record("udp", { host: typeof address === "string" ? address : "localhost", port: Number(port) });
    return udpConnect.call(this, port, address, ...rest);
  };

  const wrapLookup = (owner, name) => {
    const original = owner[name];
    if (typeof original !== "function") return;
    owner[name] = function recordedLookup(hostname, ...rest) {
      // An address needs no resolving (a bind to 0.0.0.0 looks it up too); its connect is recorded.
      if (net.isIP(String(hostname)) === 0) record("dns", { host: String(hostname) });
      return original.call(this, hostname, ...rest);
    };
  };
  for (const owner of [dns, dns.promises]) {
    for (const name of [
      "lookup",
      "lookupService",
      "resolve",
      "resolve4",
      "resolve6",
      "resolveAny",
      "resolveCname",
      "resolveMx",
      "resolveNs",
      "resolveSrv",
      "resolveTxt",
    ]) {
      wrapLookup(owner, name);
    }
  }
  // `import { lookup } from "node:dns"` reads the patched functions from now on.
  syncBuiltinESMExports();
}
