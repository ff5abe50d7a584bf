/**
 * The cancel route has one shape for every job kind: `POST <the job's URL>/cancel`, no body,
 * answered with the job's usual representation. This is the text each one documents.
 */
export const CANCEL_DESCRIPTION = [
  "Cancels the job. A queued job is removed from the queue; a running one stops at its next checkpoint",
  "(between pages, platforms, notes or steps), within about 2 seconds, and ends `cancelled`. What it stored",
  "before the cancel is kept. Cancelling a cancelled job answers the same again; cancelling a job that",
  "ended otherwise is a 409 `conflict` whose `status` names how it ended. Subscribers of the workspace's",
  "webhooks receive `<kind>.cancelled`.",
].join(" ");
