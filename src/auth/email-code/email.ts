import type { Locale } from "../signup.ts";
import { escapeHtml } from "../../tools/html.ts";
import type { RenderedEmail } from "../../email/templates.ts";

interface Strings {
  subject: (app: string, code: string) => string;
  greeting: string;
  code: (app: string) => string;
  link: string;
  button: string;
  expiry: string;
  ignore: string;
}

const STRINGS: Record<Locale, Strings> = {
  en: {
    subject: (app, code) => `${code} is your ${app} sign-in code`,
    greeting: "Hi,",
    code: (app) => `Enter this code to sign in to ${app}:`,
    link: "Or open this link on this device:",
    button: "Sign in",
    expiry: "The code and the link work once and expire in 10 minutes.",
    ignore: "If you did not ask to sign in, you can ignore this email: nobody can sign in without the code.",
  },
  es: {
    subject: (app, code) => `${code} es tu código para entrar en ${app}`,
    greeting: "Hola:",
    code: (app) => `Escribe este código para entrar en ${app}:`,
    link: "O abre este enlace en este dispositivo:",
    button: "Entrar",
    expiry: "El código y el enlace solo funcionan una vez y caducan en 10 minutos.",
    ignore: "Si no pediste entrar, puedes ignorar este correo: nadie puede entrar sin el código.",
  },
  nl: {
    subject: (app, code) => `${code} is je inlogcode voor ${app}`,
    greeting: "Hallo,",
    code: (app) => `Voer deze code in om in te loggen bij ${app}:`,
    link: "Of open deze link op dit apparaat:",
    button: "Inloggen",
    expiry: "De code en de link werken één keer en verlopen over 10 minuten.",
    ignore: "Heb je niet gevraagd om in te loggen? Dan kun je deze e-mail negeren: zonder de code kan niemand inloggen.",
  },
};

/** The sign-in email: the code always, the link when the app gave a page to open. */
export function renderSignInEmail(locale: Locale, vars: { appName: string; code: string; link: string | null }): RenderedEmail {
  const s = STRINGS[locale];
  const text = [s.greeting, "", s.code(vars.appName), "", vars.code, "", ...(vars.link ? [s.link, vars.link, ""] : []), s.expiry, s.ignore, ""].join("\n");
  const p = (t: string) => `<p style="margin:0 0 16px">${escapeHtml(t)}</p>`;
  const link = vars.link === null ? null : escapeHtml(vars.link);
  const html = [
    `<!doctype html><html lang="${locale}"><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#222;max-width:560px">`,
    p(s.greeting),
    p(s.code(vars.appName)),
    `<p style="margin:0 0 16px;font-size:28px;letter-spacing:6px;font-weight:600">${escapeHtml(vars.code)}</p>`,
    ...(link
      ? [p(s.link), `<p style="margin:0 0 16px"><a href="${link}" style="display:inline-block;padding:10px 18px;background:#2d5bd7;color:#fff;border-radius:6px;text-decoration:none">${escapeHtml(s.button)}</a></p>`]
      : []),
    p(s.expiry),
    p(s.ignore),
    "</body></html>",
  ].join("\n");
  return { subject: s.subject(vars.appName, vars.code), text, html };
}
