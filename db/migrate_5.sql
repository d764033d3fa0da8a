-- Schema version 5 (applied to a version 4 database by a writer's gt_db_open): the cubin cache's trust (issue 25).
-- Each cached cubin carries an HMAC-SHA-256, as 64 hex digits, of its cache key, resources and bytes under the
-- secret key of the user who compiled it (src/lib/trust.h). A reader loads, compiles against or exports a cached
-- cubin only when the MAC verifies under its own key: a cubin from another user's database, a merged one, or one
-- stored before this version (mac NULL) is a miss, compiled again and, where the reader may write, replaced.

ALTER TABLE cubins ADD COLUMN mac TEXT;
