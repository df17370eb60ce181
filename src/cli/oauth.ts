import { defineCommand } from "citty";
import { readFileSync } from "node:fs";
import { asProvider, listProviders, setProvider, setRedirectUrls, type ProviderSummary } from "../oauth/admin.ts";
import { appArg, CliError, dataDirArg, jsonArg, print, promptSecret, withCore, commaList } from "./shared.ts";


const describe = (p: ProviderSummary) =>
  !p.clientId
    ? `${p.provider}: not set up\n  callback URL:  ${p.callbackUrl}`
    : [
    `${p.provider}: ${p.enabled ? (p.configured ? "enabled" : "enabled, incomplete") : p.clientId ? "disabled" : "not set up"}`,
    p.clientId ? `  client id:     ${p.clientId}` : null,
    p.provider === "apple" ? `  team id:       ${p.teamId ?? "(not set)"}\n  key id:        ${p.keyId ?? "(not set)"}\n  private key:   ${p.privateKeySet ? "[encrypted]" : "(not set)"}` : `  client secret: ${p.clientSecretSet ? "[encrypted]" : "(not set)"}`,
    p.tenant ? `  tenant:        ${p.tenant}` : null,
    p.provider === "oidc" ? `  issuer:        ${p.issuer ?? "(not set)"}\n  trust email:   ${p.trustEmail}` : null,
    `  scopes:        ${p.scopes.join(" ")}`,
    `  callback URL:  ${p.callbackUrl}  (register this at the provider)`,
  ]
    .filter(Boolean)
    .join("\n");

export default defineCommand({
  meta: { name: "oauth", description: "Set up social login providers and the redirect allow-list of an app" },
  subCommands: {
    set: defineCommand({
      meta: { name: "set", description: "Set a provider's credentials (fields not given keep their value)" },
      args: {
        ...dataDirArg,
        ...jsonArg,
        ...appArg,
        provider: { type: "string", description: "google, github, apple, microsoft, facebook, discord, twitter, or oidc (any OpenID Connect issuer)", required: true },
        "client-id": { type: "string", description: "OAuth client id (Apple: the Services ID)" },
        "client-secret": { type: "string", description: 'OAuth client secret; "-" reads it from stdin without echo' },
        tenant: { type: "string", description: "Microsoft Entra tenant: common, organizations, consumers or a tenant id" },
        "team-id": { type: "string", description: "Apple team id" },
        "key-id": { type: "string", description: "Apple key id" },
        "private-key-file": { type: "string", description: "Apple private key (.p8, PKCS#8 PEM) file", valueHint: "path" },
        scopes: { type: "string", description: "Comma-separated scopes replacing the defaults" },
        issuer: { type: "string", description: "oidc: the issuer URL (https), whose /.well-known/openid-configuration is read", valueHint: "url" },
        "trust-email": { type: "string", description: "oidc: when its emails count as verified: claim (the id token's email_verified, default), always or never" },
        enable: { type: "boolean", description: "Enable the provider (default when first set up)" },
        disable: { type: "boolean", description: "Disable the provider, keeping its settings" },
      },
      run: ({ args }) =>
        withCore(args, async (core) => {
          if (args.enable && args.disable) throw new CliError("give --enable or --disable, not both");
          let clientSecret = args["client-secret"];
          if (clientSecret === "-") clientSecret = (await promptSecret("client secret: ")).trim();
          const privateKey = args["private-key-file"] === undefined ? undefined : readFileSync(args["private-key-file"], "utf8");
          const provider = asProvider(args.provider);
          const [summary] = await setProvider(core, args.app, provider, {
            enabled: args.disable ? false : args.enable ? true : undefined,
            clientId: args["client-id"],
            clientSecret,
            tenant: args.tenant,
            teamId: args["team-id"],
            keyId: args["key-id"],
            privateKey,
            scopes: commaList(args.scopes),
            issuer: args.issuer,
            trustEmail: args["trust-email"] as "claim" | "always" | "never" | undefined,
          });
          print(args.json, { provider: summary }, () => describe(summary!));
        }),
    }),
    list: defineCommand({
      meta: { name: "list", description: "Show every provider's state, callback URL and the redirect allow-list (secrets hidden)" },
      args: { ...dataDirArg, ...jsonArg, ...appArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const result = await listProviders(core, args.app);
          print(args.json, result, () =>
            [`redirect URLs: ${result.redirectUrls.length ? result.redirectUrls.join(", ") : "(none: add one with tenantd oauth redirects --add <url>)"}`, ...result.providers.map(describe)].join("\n"),
          );
        }),
    }),
    redirects: defineCommand({
      meta: { name: "redirects", description: "Change the URLs social login may return to" },
      args: {
        ...dataDirArg,
        ...jsonArg,
        ...appArg,
        set: { type: "string", description: "Comma-separated URLs (replaces the list)" },
        add: { type: "string", description: "Comma-separated URLs to add" },
        remove: { type: "string", description: "Comma-separated URLs to remove" },
      },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const redirectUrls = await setRedirectUrls(core, args.app, { set: commaList(args.set), add: commaList(args.add), remove: commaList(args.remove) });
          print(args.json, { redirectUrls }, () => (redirectUrls.length ? redirectUrls.join("\n") : "(no redirect URLs)"));
        }),
    }),
  },
});
