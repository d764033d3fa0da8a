-- Schema version 4 (applied to a version 3 database by a writer's gt_db_open): the math class (issue 16).
-- A candidate records the arithmetic its family promises ('fp32': IEEE FP32 products and sums, as cuBLAS SGEMM
-- pedantic; 'tf32x3': split TF32 tensor-core products summed in FP32, checked against FP64), and a winner is kept
-- per GPU model, shape and math class, so a class that a caller must ask for never displaces the FP32 winner.
-- Every row stored before is FP32.

ALTER TABLE candidates ADD COLUMN math TEXT NOT NULL DEFAULT 'fp32';

CREATE TABLE winners_v4 (
    model_id     INTEGER NOT NULL REFERENCES gpu_models(id),
    shape_id     INTEGER NOT NULL REFERENCES shapes(id),
    math         TEXT    NOT NULL DEFAULT 'fp32',  -- the candidate's math class
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    sweep_id     INTEGER NOT NULL REFERENCES sweeps(id),
    median_ms    REAL    NOT NULL,
    spread_pct   REAL,
    PRIMARY KEY (model_id, shape_id, math)
);
INSERT INTO winners_v4 (model_id, shape_id, math, candidate_id, sweep_id, median_ms, spread_pct)
    SELECT model_id, shape_id, 'fp32', candidate_id, sweep_id, median_ms, spread_pct FROM winners;
DROP TABLE winners;
ALTER TABLE winners_v4 RENAME TO winners;
CREATE INDEX IF NOT EXISTS winners_by_shape ON winners (shape_id);
