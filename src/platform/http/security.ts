import type { RequestHandler } from "express";
import helmet from "helmet";
import type { Config } from "../config.js";

/**
 * Security headers (helmet's defaults). Two of them only make sense when the service is
 * reached over HTTPS: `Strict-Transport-Security` and the CSP's `upgrade-insecure-requests`
 * make a browser rewrite every later request to https://, which breaks the operator pages
 * (`/docs`, `/admin/queues`) of a service served over plain HTTP. They are sent only when
 * `PUBLIC_BASE_URL` is an https:// URL, the address the service is advertised under.
 */
export const servedOverHttps = (config: Pick<Config, "PUBLIC_BASE_URL">) =>
  config.PUBLIC_BASE_URL?.toLowerCase().startsWith("https://") ?? false;

/** Every answer except the interactive viewer's. */
export function securityHeaders(config: Pick<Config, "PUBLIC_BASE_URL">): RequestHandler {
  const https = servedOverHttps(config);
  return helmet({
    strictTransportSecurity: https,
    contentSecurityPolicy: { directives: { upgradeInsecureRequests: https ? [] : null } },
  });
}

/** The interactive viewer at `/docs` loads inline scripts and styles, so it has no CSP. */
export function docsSecurityHeaders(config: Pick<Config, "PUBLIC_BASE_URL">): RequestHandler {
  return helmet({ contentSecurityPolicy: false, strictTransportSecurity: servedOverHttps(config) });
}
