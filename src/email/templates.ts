import type { Locale } from "../auth/signup.ts";
import { escapeHtml } from "../tools/html.ts";

export type EmailKind = "verify" | "reset" | "export";

interface Strings {
  subject: (app: string) => string;
  greeting: string;
  body: (app: string) => string;
  button: string;
  expiry: string;
  ignore: string;
}

// One table per locale so a translator sees every string of a language together.
const STRINGS: Record<Locale, Record<EmailKind, Strings>> = {
  en: {
    verify: {
      subject: (app) => `Confirm your email for ${app}`,
      greeting: "Hi,",
      body: (app) => `Please confirm your email address for ${app} by opening this link:`,
      button: "Confirm email",
      expiry: "The link works once and expires in 24 hours.",
      ignore: "If you did not create an account, you can ignore this email.",
    },
    reset: {
      subject: (app) => `Reset your ${app} password`,
      greeting: "Hi,",
      body: (app) => `Someone (hopefully you) asked to reset the password of your ${app} account. Open this link to choose a new password:`,
      button: "Choose a new password",
      expiry: "The link works once and expires in 1 hour.",
      ignore: "If you did not ask for this, ignore this email: your password stays the same.",
    },
    export: {
      subject: (app) => `Your ${app} data is ready to download`,
      greeting: "Hi,",
      body: (app) => `You asked for a copy of everything your ${app} account holds. Open this link to download it as a ZIP file:`,
      button: "Download my data",
      expiry: "The link works once and expires in 24 hours.",
      ignore: "If you did not ask for this, ignore this email and change your password: nothing is downloaded until the link is opened.",
    },
  },
  es: {
    verify: {
      subject: (app) => `Confirma tu correo electrónico para ${app}`,
      greeting: "Hola:",
      body: (app) => `Confirma tu dirección de correo electrónico para ${app} abriendo este enlace:`,
      button: "Confirmar correo",
      expiry: "El enlace solo funciona una vez y caduca en 24 horas.",
      ignore: "Si no creaste una cuenta, puedes ignorar este correo.",
    },
    reset: {
      subject: (app) => `Restablece tu contraseña de ${app}`,
      greeting: "Hola:",
      body: (app) => `Alguien (esperamos que tú) pidió restablecer la contraseña de tu cuenta de ${app}. Abre este enlace para elegir una contraseña nueva:`,
      button: "Elegir una contraseña nueva",
      expiry: "El enlace solo funciona una vez y caduca en 1 hora.",
      ignore: "Si no lo pediste, ignora este correo: tu contraseña no cambia.",
    },
    export: {
      subject: (app) => `Tus datos de ${app} están listos para descargar`,
      greeting: "Hola:",
      body: (app) => `Pediste una copia de todo lo que guarda tu cuenta de ${app}. Abre este enlace para descargarla como archivo ZIP:`,
      button: "Descargar mis datos",
      expiry: "El enlace solo funciona una vez y caduca en 24 horas.",
      ignore: "Si no lo pediste, ignora este correo y cambia tu contraseña: no se descarga nada hasta que se abra el enlace.",
    },
  },
  nl: {
    verify: {
      subject: (app) => `Bevestig je e-mailadres voor ${app}`,
      greeting: "Hallo,",
      body: (app) => `Bevestig je e-mailadres voor ${app} door deze link te openen:`,
      button: "E-mailadres bevestigen",
      expiry: "De link werkt één keer en verloopt over 24 uur.",
      ignore: "Heb je geen account aangemaakt? Dan kun je deze e-mail negeren.",
    },
    reset: {
      subject: (app) => `Stel je wachtwoord voor ${app} opnieuw in`,
      greeting: "Hallo,",
      body: (app) => `Iemand (hopelijk jij) heeft gevraagd het wachtwoord van je ${app}-account opnieuw in te stellen. Open deze link om een nieuw wachtwoord te kiezen:`,
      button: "Nieuw wachtwoord kiezen",
      expiry: "De link werkt één keer en verloopt over 1 uur.",
      ignore: "Heb je dit niet gevraagd? Negeer dan deze e-mail: je wachtwoord blijft hetzelfde.",
    },
    export: {
      subject: (app) => `Je gegevens van ${app} staan klaar om te downloaden`,
      greeting: "Hallo,",
      body: (app) => `Je hebt gevraagd om een kopie van alles wat je ${app}-account bevat. Open deze link om die als ZIP-bestand te downloaden:`,
      button: "Mijn gegevens downloaden",
      expiry: "De link werkt één keer en verloopt over 24 uur.",
      ignore: "Heb je dit niet gevraagd? Negeer dan deze e-mail en wijzig je wachtwoord: er wordt niets gedownload tot de link geopend wordt.",
    },
  },
};

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}


/** The verification or reset email in the tenant's language (callers pass a supported locale). */
export function renderEmail(kind: EmailKind, locale: Locale, vars: { appName: string; link: string }): RenderedEmail {
  const s = STRINGS[locale][kind];
  return { subject: s.subject(vars.appName), ...renderActionEmail(locale, { greeting: s.greeting, body: s.body(vars.appName), button: s.button, link: vars.link, after: [s.expiry, s.ignore] }) };
}

/** The layout of an email whose point is one link (a button, and the link written out for clients that hide it). */
export function renderActionEmail(locale: Locale, m: { greeting: string; body: string; button: string; link: string; after: string[] }): { text: string; html: string } {
  const text = [m.greeting, "", m.body, m.link, "", ...m.after, ""].join("\n");
  const p = (t: string) => `<p style="margin:0 0 16px">${escapeHtml(t)}</p>`;
  const link = escapeHtml(m.link);
  const html = [
    `<!doctype html><html lang="${locale}"><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#222;max-width:560px">`,
    p(m.greeting),
    p(m.body),
    `<p style="margin:0 0 16px"><a href="${link}" style="display:inline-block;padding:10px 18px;background:#2d5bd7;color:#fff;border-radius:6px;text-decoration:none">${escapeHtml(m.button)}</a></p>`,
    `<p style="margin:0 0 16px;font-size:13px;word-break:break-all"><a href="${link}">${link}</a></p>`,
    ...m.after.map(p),
    "</body></html>",
  ].join("\n");
  return { text, html };
}
