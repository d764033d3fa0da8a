-- Schema version 2 (applied to a version 1 database by gt_db_open).
-- Sweeps get a global id so `gemmtune merge` and `gemmtune import` recognise a sweep they already hold (merging
-- twice changes nothing); lookups made by the loader, query, resume and merge get their indexes.

ALTER TABLE sweeps ADD COLUMN uid TEXT;             -- 32 hex digits, random at gt_db_begin_sweep, kept by merge
-- A version 1 sweep gets a uid from what identifies it, so the same old file merged twice (each time migrated in
-- a fresh copy) gives the same uid; gt_stable_uid is registered by gt_db_open.
UPDATE sweeps SET uid = gt_stable_uid('v1-sweep', id, started_at, (SELECT uuid FROM gpus WHERE gpus.id = sweeps.gpu_id),
                                      host, command)
WHERE uid IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS sweeps_by_uid ON sweeps (uid);
CREATE INDEX IF NOT EXISTS sweeps_by_gpu ON sweeps (gpu_id);
CREATE INDEX IF NOT EXISTS gpus_by_model ON gpus (model_id);
CREATE INDEX IF NOT EXISTS trials_by_sweep ON trials (sweep_id, shape_id);
CREATE INDEX IF NOT EXISTS trials_by_candidate ON trials (candidate_id, shape_id);
CREATE INDEX IF NOT EXISTS winners_by_shape ON winners (shape_id);
