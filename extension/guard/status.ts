// The guard's status-bar text (docs/GUARD.md "The status bar"), recomputed from
// the session whenever something changed: off, a problem with the classifier,
// `🛡 distilling…`, or the savings with the bill's two words and the judge's
// work in the background. Cosmetic: ui.ts catches its failures, so none
// reaches a pass.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { GuardStats } from "../kept.ts";
import { setStatus } from "../ui.ts";
import { sessionBill } from "./bill.ts";
import { guardFigures } from "./figures.ts";
import { findClassifier } from "./model.ts";
import type { SettingsCache } from "./settings.ts";

const STATUS_KEY = "context-guard";

export class StatusBar {
  private readonly settings: SettingsCache;
  /** The judge's work in the background (`· judging 3 outputs…`), shown after the savings. */
  private readonly backgroundStatus: () => string;

  constructor(settings: SettingsCache, backgroundStatus: () => string) {
    this.settings = settings;
    this.backgroundStatus = backgroundStatus;
  }

  /** `🛡 distilling…` while a pass's requests run. */
  readonly busy = (ctx: ExtensionContext): void => this.showSaved(ctx, "🛡 distilling…");

  /** A problem with the classifier, in the warning colour: `🛡 Jev model not found`. */
  readonly showProblem = (ctx: ExtensionContext, problem: string): void => setStatus(ctx, STATUS_KEY, [["warning", `🛡 ${problem}`]]);

  /** The status-bar text, recomputed from the session; the guard's figures when it is on and ready. */
  readonly refresh = (ctx: ExtensionContext): GuardStats | undefined => {
    try {
      const { settings } = this.settings.settingsOf(ctx);
      if (!settings.enabled) {
        setStatus(ctx, STATUS_KEY, [["dim", "🛡 guard off"]]);
        return undefined;
      }
      const lookup = findClassifier(ctx, settings);
      if (!lookup.ok) {
        this.showProblem(ctx, lookup.status);
        return undefined;
      }
      // Where the bill has prices, its two words stand in place of the items: `🛡 −25k tok · saved $0.27`.
      const figures = guardFigures(ctx, sessionBill(ctx)?.short ?? "");
      if (!figures.ok) {
        this.settings.warnOnce(ctx, `cannot compute the savings: ${figures.error}`);
        return undefined;
      }
      // The judge at work in the background (issue 27): `· judging 3 outputs…` after the savings.
      this.showSaved(ctx, figures.value.status.saved, figures.value.status.rest + this.backgroundStatus());
      return figures.value.stats;
    } catch (error) {
      this.settings.warnOnce(ctx, `status failed: ${(error as Error).message}`);
      return undefined;
    }
  };

  private showSaved(ctx: ExtensionContext, saved: string, rest = ""): void {
    setStatus(
      ctx,
      STATUS_KEY,
      rest
        ? [
            ["success", saved],
            ["dim", rest],
          ]
        : [["success", saved]],
    );
  }
}
