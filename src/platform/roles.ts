/**
 * Workspace roles, weakest first: viewers read everything in the workspace; editors also write
 * (ingest, jobs, analyses, knowledge records, skills, runs); admins also manage members, webhooks and
 * routines; owners also transfer ownership and delete the workspace. A workspace keeps one owner.
 */
export const ROLES = ["viewer", "editor", "admin", "owner"] as const;
export type Role = (typeof ROLES)[number];

export const rankOf = (role: string) => ROLES.indexOf(role as Role);

/** Whether `role` is at least `needed`. */
export const atLeast = (role: string, needed: Role) => rankOf(role) >= rankOf(needed);
