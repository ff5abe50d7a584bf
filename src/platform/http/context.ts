import type { Request } from "express";
import type { AuthContext, Authenticator, Credential } from "../auth.js";

/** What the HTTP plumbing needs beyond the route table. */
export interface HttpServices {
  authenticator: Authenticator;
  readCredential: (req: Request) => Credential | undefined;
  rateLimit: (req: Request, auth: AuthContext | undefined) => Promise<void>;
  /** Marks a caller whose request may write, so its replica reads go to the primary for a while. */
  noteWrite?: (auth: AuthContext | undefined) => Promise<void>;
}
