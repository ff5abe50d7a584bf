-- Saved pages: keep what recall reads on every query in the row itself.
-- With default storage a page's tsvector (~2 KB for a 2 KB page) is moved to TOAST, so
-- the keyword ranking fetched four TOAST chunks per matching page, and loading a
-- user's vectors decompressed each embedding. MAIN keeps both in the row (compressed if
-- need be) and moves them out only when the row cannot fit a page otherwise; `content`
-- (read only for the ≤ 20 snippets of an answer) goes to TOAST first instead.
-- Measured in docs/benchmarks.md (Context recall). Applies to rows written from now on.
ALTER TABLE "pages" ALTER COLUMN "search_vector" SET STORAGE MAIN;
ALTER TABLE "pages" ALTER COLUMN "embedding" SET STORAGE MAIN;
