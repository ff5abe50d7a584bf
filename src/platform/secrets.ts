import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { Config } from "./config.js";

/**
 * Sealing of short-lived secrets (e.g. a provider API key carried in a job payload):
 * AES-256-GCM with a 256-bit key derived by HKDF-SHA256 from `SECRETS_KEY`, a random
 * 96-bit nonce per seal, and associated data that binds the sealed value to its use
 * (e.g. the sync id), so a sealed value copied into another job does not open.
 *
 * Sealed form: `v1.<nonce>.<ciphertext>.<tag>`, each part base64url.
 */
const VERSION = "v1";
const SALT = "research-evidence/secrets";
const INFO = "sealed-credential/v1";

export class SecretsError extends Error {
  override name = "SecretsError";
}

export interface SecretBox {
  seal(plaintext: string, associatedData: string): string;
  open(sealed: string, associatedData: string): string;
}

export function deriveSecretsKey(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", Buffer.from(secret, "utf8"), SALT, INFO, 32));
}

export function createSecretBoxFromKey(key: Buffer): SecretBox {
  if (key.length !== 32) throw new SecretsError("the sealing key must be 32 bytes");
  return {
    seal(plaintext, associatedData) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, nonce);
      cipher.setAAD(Buffer.from(associatedData, "utf8"));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, nonce.toString("base64url"), ciphertext.toString("base64url"), tag.toString("base64url")].join(".");
    },
    open(sealed, associatedData) {
      const parts = sealed.split(".");
      if (parts.length !== 4 || parts[0] !== VERSION) throw new SecretsError("not a sealed value of a known version");
      const [, nonce, ciphertext, tag] = parts.map((p) => Buffer.from(p, "base64url")) as [Buffer, Buffer, Buffer, Buffer];
      if (nonce.length !== 12 || tag.length !== 16) throw new SecretsError("malformed sealed value");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, nonce);
        decipher.setAAD(Buffer.from(associatedData, "utf8"));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
      } catch {
        throw new SecretsError("the sealed value does not open with this key and associated data");
      }
    },
  };
}

/** The deployment's secret box, or undefined when `SECRETS_KEY` is not configured. */
export function secretBoxFor(config: Pick<Config, "SECRETS_KEY">): SecretBox | undefined {
  return config.SECRETS_KEY ? createSecretBoxFromKey(deriveSecretsKey(config.SECRETS_KEY)) : undefined;
}
