-- Which account an email names. `users.email` was written at sign-in from any token whose `email_verified`
-- claim was not the boolean false, so a token saying "false" (a string) put an unverified email there, and
-- adding a member by email took the oldest account with it. Now an email is matched only when its account
-- verified it at sign-in (`email_verified_at`, set from a verified claim: `true`, or no claim at all).
-- Emails stored before this migration are not known to be verified: they match nothing until their account
-- signs in again with a verified claim, which sets the time (an invitation waits for that sign-in meanwhile).
ALTER TABLE "users" ADD COLUMN "email_verified_at" TIMESTAMPTZ(3);

-- Adding a member by email looks up the verified accounts of that email.
CREATE INDEX "users_verified_email_idx" ON "users" (lower("email")) WHERE "email_verified_at" IS NOT NULL;
