import { type DestinationStream, type Logger, type LoggerOptions, pino } from "pino";

export type { Logger };

/**
 * Structured JSON logs. Secrets are redacted wherever they might appear in a logged object.
 * `destination` defaults to stdout (tests pass a stream to read what was logged).
 */
export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    name,
    level,
    base: { service: "research-evidence", process: name },
    redact: {
      paths: [
        "req.headers.authorization",
        "req.headers.cookie",
        "req.headers['x-api-key']",
        "api_key",
        "*.api_key",
        "*.*.api_key",
        "*.apiKey",
        "credential",
        "*.credential",
        "*.*.credential",
        "*.raw_key",
        "*.password",
        "*.token",
        "*.secret",
      ],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
