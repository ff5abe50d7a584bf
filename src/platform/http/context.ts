import type { Request } from "express";
import type { AuthContext, Authenticator } from "../auth.js";

/** What the HTTP plumbing needs beyond the route table. */
export interface HttpServices {
  authenticator: Authenticator;
  readCredential: (req: Request) => string | undefined;
  rateLimit: (req: Request, auth: AuthContext | undefined) => Promise<void>;
}
