import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { toLocale, type Locale } from "../auth/signup.ts";
import { renderActionEmail } from "../email/templates.ts";
import { mailerFor } from "../email/mailer.ts";

interface Strings {
  subject: (org: string, app: string) => string;
  greeting: string;
  body: (inviter: string, org: string, app: string) => string;
  button: string;
  expiry: (days: number) => string;
  ignore: string;
}

// One table per locale so a translator sees every string of a language together.
const STRINGS: Record<Locale, Strings> = {
  en: {
    subject: (org, app) => `You are invited to join ${org} on ${app}`,
    greeting: "Hi,",
    body: (inviter, org, app) => `${inviter} invited you to join the organization ${org} on ${app}. Open this link to accept:`,
    button: "Accept the invitation",
    expiry: (days) => `The link works once and expires in ${days} day${days === 1 ? "" : "s"}.`,
    ignore: "If you do not know this organization, you can ignore this email.",
  },
  es: {
    subject: (org, app) => `Te invitan a unirte a ${org} en ${app}`,
    greeting: "Hola:",
    body: (inviter, org, app) => `${inviter} te invitó a unirte a la organización ${org} en ${app}. Abre este enlace para aceptar:`,
    button: "Aceptar la invitación",
    expiry: (days) => `El enlace solo funciona una vez y caduca en ${days} día${days === 1 ? "" : "s"}.`,
    ignore: "Si no conoces esta organización, puedes ignorar este correo.",
  },
  nl: {
    subject: (org, app) => `Je bent uitgenodigd voor ${org} op ${app}`,
    greeting: "Hallo,",
    body: (inviter, org, app) => `${inviter} heeft je uitgenodigd voor de organisatie ${org} op ${app}. Open deze link om de uitnodiging aan te nemen:`,
    button: "Uitnodiging aannemen",
    expiry: (days) => `De link werkt één keer en verloopt over ${days} ${days === 1 ? "dag" : "dagen"}.`,
    ignore: "Ken je deze organisatie niet? Dan kun je deze e-mail negeren.",
  },
};

export function renderOrgInvite(locale: Locale, vars: { appName: string; orgName: string; inviter: string; link: string; days: number }) {
  const s = STRINGS[locale];
  const body = s.body(vars.inviter, vars.orgName, vars.appName);
  return { subject: s.subject(vars.orgName, vars.appName), ...renderActionEmail(locale, { greeting: s.greeting, body, button: s.button, link: vars.link, after: [s.expiry(vars.days), s.ignore] }) };
}

/** The link an invitee follows: the app's `settings.orgs.inviteUrl` with `{token}` replaced. */
export function orgInviteLink(app: AppRow, token: string): string | null {
  return app.settings.orgs.inviteUrl?.replaceAll("{token}", encodeURIComponent(token)) ?? null;
}

/** Queues the invitation, sent after the reply; the invitee may have no account yet. */
export function queueOrgInviteEmail(core: Core, app: AppRow, to: string, locale: string | undefined, vars: { orgName: string; inviter: string; link: string; days: number }): void {
  mailerFor(core).queue(() => {
    const lang = toLocale(locale);
    const appName = app.settings.email.appName ?? app.name;
    return { appId: app.id, tenantId: null, kind: "org_invite", locale: lang, from: app.settings.email.from ?? core.config.email.from, to, ...renderOrgInvite(lang, { appName, ...vars }), link: vars.link };
  });
}
