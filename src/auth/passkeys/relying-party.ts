import type { AppRow } from "../../db/types.ts";
import { fail } from "../../errors.ts";

export interface RelyingParty {
  id: string;
  name: string;
  /** The app's origins under the RP id: where a passkey ceremony may run. */
  origins: string[];
}

/**
 * One relying party per app: its id is `settings.auth.passkeys.rpId`, else the host of the
 * first of `settings.corsOrigins`; the ceremonies are accepted from the app's origins on that
 * host or below it. Without an origin there is no page a passkey could be used on.
 */
export function relyingParty(app: AppRow): RelyingParty {
  const settings = app.settings.auth.passkeys;
  if (!settings.enabled) throw fail("forbidden", "Passkeys are turned off for this app (settings.auth.passkeys.enabled).");
  const origins = app.settings.corsOrigins.filter((o) => o !== "*");
  const id = settings.rpId ?? (origins[0] ? new URL(origins[0]).hostname : undefined);
  if (!id) {
    throw fail("invalid_request", "Passkeys need the app's web origin: the developer adds it to settings.corsOrigins (e.g. https://app.example.com).");
  }
  const under = origins.filter((o) => {
    const host = new URL(o).hostname;
    return host === id || host.endsWith(`.${id}`);
  });
  if (under.length === 0) throw fail("invalid_request", `None of the app's settings.corsOrigins is on ${id} (settings.auth.passkeys.rpId): passkeys cannot be used from them.`);
  return { id, name: settings.rpName ?? app.settings.email.appName ?? app.name, origins: under };
}
