import type { Locale } from "../auth/signup.ts";
import { escapeHtml } from "../tools/html.ts";
import type { SecurityEventName } from "../auth/security-events.ts";

interface Strings {
  greeting: string;
  notice: string;
  notYou: string;
  what: Record<SecurityEventName, { subject: (app: string) => string; body: (app: string) => string }>;
}

// One table per locale so a translator sees every string of a language together.
const STRINGS: Record<Locale, Strings> = {
  en: {
    greeting: "Hi,",
    notice: "This is a notice about the security of your account; there is nothing to do if it was you.",
    notYou: "If it was not you, change your password now and turn two-factor authentication on, or contact the app's support.",
    what: {
      "passkey.added": { subject: (app) => `A passkey was added to your ${app} account`, body: (app) => `A new passkey can now sign in to your ${app} account.` },
      "passkey.removed": { subject: (app) => `A passkey was removed from your ${app} account`, body: (app) => `A passkey was removed from your ${app} account; it can no longer sign in.` },
      "mfa.enabled": { subject: (app) => `Two-factor authentication is on for ${app}`, body: (app) => `Two-factor authentication was turned on for your ${app} account.` },
      "mfa.disabled": { subject: (app) => `Two-factor authentication is off for ${app}`, body: (app) => `Two-factor authentication was turned off for your ${app} account.` },
      "mfa.recovery_code_used": { subject: (app) => `A recovery code was used for ${app}`, body: (app) => `A recovery code was used to sign in to your ${app} account.` },
      "sign_in_method.added": { subject: (app) => `A new sign-in method for ${app}`, body: (app) => `A new way to sign in was added to your ${app} account.` },
    },
  },
  es: {
    greeting: "Hola:",
    notice: "Este es un aviso sobre la seguridad de tu cuenta; si fuiste tú, no tienes que hacer nada.",
    notYou: "Si no fuiste tú, cambia tu contraseña ahora y activa la verificación en dos pasos, o contacta con el soporte de la aplicación.",
    what: {
      "passkey.added": { subject: (app) => `Se añadió una llave de acceso a tu cuenta de ${app}`, body: (app) => `Una nueva llave de acceso puede iniciar sesión en tu cuenta de ${app}.` },
      "passkey.removed": { subject: (app) => `Se quitó una llave de acceso de tu cuenta de ${app}`, body: (app) => `Se quitó una llave de acceso de tu cuenta de ${app}; ya no puede iniciar sesión.` },
      "mfa.enabled": { subject: (app) => `La verificación en dos pasos está activada en ${app}`, body: (app) => `Se activó la verificación en dos pasos en tu cuenta de ${app}.` },
      "mfa.disabled": { subject: (app) => `La verificación en dos pasos está desactivada en ${app}`, body: (app) => `Se desactivó la verificación en dos pasos en tu cuenta de ${app}.` },
      "mfa.recovery_code_used": { subject: (app) => `Se usó un código de recuperación en ${app}`, body: (app) => `Se usó un código de recuperación para iniciar sesión en tu cuenta de ${app}.` },
      "sign_in_method.added": { subject: (app) => `Un nuevo método de inicio de sesión en ${app}`, body: (app) => `Se añadió una nueva forma de iniciar sesión a tu cuenta de ${app}.` },
    },
  },
  nl: {
    greeting: "Hallo,",
    notice: "Dit is een melding over de beveiliging van je account; was jij het, dan hoef je niets te doen.",
    notYou: "Was jij het niet? Wijzig dan nu je wachtwoord en zet tweestapsverificatie aan, of neem contact op met de support van de app.",
    what: {
      "passkey.added": { subject: (app) => `Er is een passkey toegevoegd aan je ${app}-account`, body: (app) => `Een nieuwe passkey kan nu inloggen op je ${app}-account.` },
      "passkey.removed": { subject: (app) => `Er is een passkey verwijderd van je ${app}-account`, body: (app) => `Er is een passkey verwijderd van je ${app}-account; die kan niet meer inloggen.` },
      "mfa.enabled": { subject: (app) => `Tweestapsverificatie staat aan voor ${app}`, body: (app) => `Tweestapsverificatie is aangezet voor je ${app}-account.` },
      "mfa.disabled": { subject: (app) => `Tweestapsverificatie staat uit voor ${app}`, body: (app) => `Tweestapsverificatie is uitgezet voor je ${app}-account.` },
      "mfa.recovery_code_used": { subject: (app) => `Er is een herstelcode gebruikt voor ${app}`, body: (app) => `Er is een herstelcode gebruikt om in te loggen op je ${app}-account.` },
      "sign_in_method.added": { subject: (app) => `Een nieuwe inlogmethode voor ${app}`, body: (app) => `Er is een nieuwe manier om in te loggen toegevoegd aan je ${app}-account.` },
    },
  },
};

/** A security notice in the tenant's language: no link to follow, so none to phish with. */
export function renderSecurityEmail(event: SecurityEventName, locale: Locale, appName: string): { subject: string; text: string; html: string } {
  const s = STRINGS[locale];
  const w = s.what[event];
  const lines = [s.greeting, w.body(appName), s.notice, s.notYou];
  const text = [lines[0], "", ...lines.slice(1), ""].join("\n");
  const p = (t: string) => `<p style="margin:0 0 16px">${escapeHtml(t)}</p>`;
  const html = [`<!doctype html><html lang="${locale}"><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#222;max-width:560px">`, ...lines.map(p), "</body></html>"].join("\n");
  return { subject: w.subject(appName), text, html };
}
