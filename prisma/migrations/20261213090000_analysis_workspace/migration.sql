-- Every analysis belongs to the one workspace whose stored originals it reads (src/insights/analysis/scope.ts,
-- analysisWorkspaceFor), decided when it is requested: its admins list and revoke its share links, and a member
-- who leaves reads it no more. An analysis reads its own workspace only. Before, an analysis that named no entity
-- or project was stored without a workspace and read every workspace of its starter, a viewer's too, and its
-- share links lived in the starter's personal workspace. This gives the rows stored before a workspace.

-- An analysis of an entity or a project: that workspace (what it was read as already).
UPDATE "analyses" a SET "workspace_id" = e."workspace_id"
FROM "entities" e
WHERE a."workspace_id" IS NULL AND a."entity_id" = e."id";

UPDATE "analyses" a SET "workspace_id" = p."workspace_id"
FROM "projects" p
WHERE a."workspace_id" IS NULL AND a."entity_id" IS NULL AND a."project_id" = p."id";

-- An analysis of no scope: the workspaces whose originals its evidence quotes (live rows, and the tombstones of
-- rows deleted since).
CREATE TEMPORARY TABLE "analysis_quoted_workspaces" AS
SELECT a."id" AS "analysis_id", w."workspace_id"
FROM "analyses" a
JOIN "analysis_events" ev ON ev."analysis_id" = a."id" AND ev."event" = 'evidence'
CROSS JOIN LATERAL (
  SELECT CASE WHEN ev."data"->>'content_id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
    THEN (ev."data"->>'content_id')::uuid END AS "content_id"
) q
CROSS JOIN LATERAL (
  SELECT c."workspace_id" FROM "content_store" c WHERE c."id" = q."content_id"
  UNION
  SELECT d."workspace_id" FROM "content_deletions" d WHERE d."content_id" = q."content_id"
) w
WHERE a."workspace_id" IS NULL AND a."entity_id" IS NULL AND a."project_id" IS NULL
GROUP BY a."id", w."workspace_id";

-- One workspace quoted: the analysis is that workspace's.
UPDATE "analyses" a SET "workspace_id" = q."workspace_id"
FROM (
  SELECT "analysis_id", min("workspace_id"::text)::uuid AS "workspace_id"
  FROM "analysis_quoted_workspaces" GROUP BY "analysis_id" HAVING count(*) = 1
) q
WHERE a."id" = q."analysis_id";

-- A link opens an analysis only while both are one workspace's (src/delivery/share/views.ts). Links of an analysis
-- that now belongs to another workspace than the link's, and links of one that still has none but quotes any
-- workspace's originals other than the link's (several workspaces' at once), are revoked: their pages showed
-- originals to people whom the quoted workspace's admins could neither list nor revoke.
UPDATE "share_links" l SET "revoked_at" = now()
FROM "analyses" a
WHERE l."resource_kind" = 'analysis' AND l."resource_id" = a."id" AND l."revoked_at" IS NULL
  AND (
    (a."workspace_id" IS NOT NULL AND a."workspace_id" <> l."workspace_id")
    OR (a."workspace_id" IS NULL AND EXISTS (
      SELECT 1 FROM "analysis_quoted_workspaces" q WHERE q."analysis_id" = a."id" AND q."workspace_id" <> l."workspace_id"))
  );

DROP TABLE "analysis_quoted_workspaces";
