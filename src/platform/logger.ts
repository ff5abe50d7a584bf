import { type Logger, pino } from "pino";

export type { Logger };

/** Structured JSON logs. Secrets are redacted wherever they might appear in a logged object. */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    base: { service: "research-evidence", process: name },
    redact: {
      paths: [
        "req.headers.authorization",
        "req.headers.cookie",
        "req.headers['x-api-key']",
        "*.api_key",
        "*.apiKey",
        "*.raw_key",
        "*.password",
        "*.token",
        "*.secret",
      ],
      censor: "[redacted]",
    },
  });
}
