/**
 * Who may make tenantd build an automatic index (issue 39): never one tenant alone. A field
 * qualifies once `minTenants` different tenants of the app, each with a large enough
 * collection, listed on it within `askWindowMs`; an app then gets at most `buildsPerWindow`
 * automatic builds per window. A developer who wants an index at once declares the field
 * (settings.collections.<name>.indexed). Engine-neutral: each store asks before it builds.
 */
export interface AutoIndexRuleLimits {
  minTenants: number;
  askWindowMs: number;
  buildsPerWindow: number;
}

/** Fields waiting for more tenants, remembered per app; past it, new ones wait for room. */
export const MAX_ASKED_PER_APP = 64;

export type AskOutcome = "build" | "wait" | "budget";

export function createAutoIndexRule(limits: AutoIndexRuleLimits) {
  /** app → "collection\0path" → tenant → when it last asked (at most minTenants tenants each) */
  const asked = new Map<string, Map<string, Map<string, number>>>();
  /** app → start times of its builds within the window */
  const builds = new Map<string, number[]>();

  function recent(appId: string, now: number): number[] {
    const kept = (builds.get(appId) ?? []).filter((at) => now - at < limits.askWindowMs);
    if (kept.length === 0) builds.delete(appId);
    else builds.set(appId, kept);
    return kept;
  }

  return {
    /**
     * A tenant whose collection is large enough listed on a field without an index. "build"
     * (counted against the budget) once enough tenants asked; "budget" when they did but the
     * app's builds for the window are spent.
     */
    ask(appId: string, collection: string, path: string, tenantId: string, now: number): AskOutcome {
      let fields = asked.get(appId);
      const field = `${collection}\u0000${path}`;
      let tenants = fields?.get(field);
      if (!tenants) {
        if ((fields?.size ?? 0) >= MAX_ASKED_PER_APP) {
          // Room is made by fields whose askers all went quiet.
          for (const [f, ts] of fields!) if ([...ts.values()].every((at) => now - at >= limits.askWindowMs)) fields!.delete(f);
          if (fields!.size >= MAX_ASKED_PER_APP) return "wait";
        }
        if (!fields) asked.set(appId, (fields = new Map()));
        fields.set(field, (tenants = new Map()));
      }
      for (const [t, at] of tenants) if (now - at >= limits.askWindowMs) tenants.delete(t);
      if (tenants.has(tenantId) || tenants.size < limits.minTenants) tenants.set(tenantId, now);
      if (tenants.size < limits.minTenants) return "wait";
      const spent = recent(appId, now);
      if (spent.length >= limits.buildsPerWindow) return "budget";
      spent.push(now);
      builds.set(appId, spent);
      fields!.delete(field);
      if (fields!.size === 0) asked.delete(appId);
      return "build";
    },
    /** The app is gone. */
    forgetApp(appId: string): void {
      asked.delete(appId);
      builds.delete(appId);
    },
  };
}

export type AutoIndexRule = ReturnType<typeof createAutoIndexRule>;
