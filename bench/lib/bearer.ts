import { SignJWT } from "jose";

/** A user bearer the service accepts under AUTH_JWT_SECRET `secret` (HS256, subject `sub`). */
export function bearer(secret: string, sub: string, expiresIn = "2h"): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(secret));
}
