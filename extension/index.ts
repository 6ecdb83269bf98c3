// pi-context-guard: the Pi extension's entry point.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerReport } from "./report/index.ts";
import { registerGuard } from "./guard/index.ts";

export default function contextGuard(pi: ExtensionAPI): void {
  registerReport(pi);
  registerGuard(pi);
}
