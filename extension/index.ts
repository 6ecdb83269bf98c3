// pi-context-guard: the Pi extension's entry point.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerContext } from "./context/index.ts";
import { registerGuard } from "./guard/index.ts";

export default function contextGuard(pi: ExtensionAPI): void {
  registerContext(pi);
  registerGuard(pi);
}
