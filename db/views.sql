-- Views for people reading the database with sqlite3 (`sqlite3 ~/.local/share/gemmtune/gemmtune.db`,
-- then `.mode box` and `SELECT * FROM v_winners;`). gt_db_open drops and re-creates them whenever it migrates,
-- so a view may change with any schema version. Times are milliseconds, TFLOPS = 2 batch m n k / time; batch is
-- the products of one call (1: one GEMM).

DROP VIEW IF EXISTS v_winners;
DROP VIEW IF EXISTS v_trials;
DROP VIEW IF EXISTS v_sweeps;
DROP VIEW IF EXISTS v_gpus;
DROP VIEW IF EXISTS v_baselines;

-- The best verified kernel per GPU model (name + compute capability + SM count), shape and math class.
CREATE VIEW v_winners AS
SELECT gm.name AS gpu, gm.cc_major || '.' || gm.cc_minor AS cc, gm.sm_count,
       s.batch, s.m, s.n, s.k, s.layout, w.math, c.family, c.params, c.source_hash,
       w.median_ms, 2.0 * s.batch * s.m * s.n * s.k / (w.median_ms * 1e9) AS tflops,
       b.cublas_ms, 2.0 * s.batch * s.m * s.n * s.k / (b.cublas_ms * 1e9) AS cublas_tflops,
       b.cublas_ms / w.median_ms AS ratio_vs_cublas, w.spread_pct,
       w.sweep_id, sw.origin, sw.host, sw.started_at
FROM winners w
JOIN gpu_models gm ON gm.id = w.model_id
JOIN shapes s ON s.id = w.shape_id
JOIN candidates c ON c.id = w.candidate_id
JOIN sweeps sw ON sw.id = w.sweep_id
LEFT JOIN baselines b ON b.model_id = w.model_id AND b.shape_id = w.shape_id;

-- Every stored trial, failed ones included (status and message say why), with cuBLAS on the same model and shape.
CREATE VIEW v_trials AS
SELECT t.id, gm.name AS gpu, gm.cc_major || '.' || gm.cc_minor AS cc, gm.sm_count, g.uuid,
       s.batch, s.m, s.n, s.k, s.layout, c.math, c.family, c.params, c.source_hash, t.status, t.message,
       t.median_ms, t.min_ms, t.max_ms, t.tflops, t.rel_err, b.cublas_ms, b.cublas_ms / t.median_ms AS ratio_vs_cublas,
       t.regs, t.spill_bytes, t.compile_s, t.reps, t.sweep_id, sw.origin, t.created_at
FROM trials t
JOIN sweeps sw ON sw.id = t.sweep_id
JOIN gpus g ON g.id = sw.gpu_id
JOIN gpu_models gm ON gm.id = g.model_id
JOIN shapes s ON s.id = t.shape_id
JOIN candidates c ON c.id = t.candidate_id
LEFT JOIN baselines b ON b.model_id = g.model_id AND b.shape_id = t.shape_id;

-- One row per sweep: which GPU, its software and clock at the start, where the rows came from, how many trials.
-- nvidia_driver is the driver's version ("580.159.04"); driver_version the CUDA driver API version (13000 = 13.0).
CREATE VIEW v_sweeps AS
SELECT sw.id, sw.uid, sw.started_at, sw.origin, sw.host, sw.command, sw.gemmtune_version,
       gm.name AS gpu, gm.cc_major || '.' || gm.cc_minor AS cc, gm.sm_count, g.uuid,
       sw.nvidia_driver, sw.driver_version, sw.cuda_version, sw.nvrtc_version, sw.sm_clock_mhz,
       (SELECT count(*) FROM trials t WHERE t.sweep_id = sw.id) AS trials,
       (SELECT count(*) FROM trials t WHERE t.sweep_id = sw.id AND t.status = 'ok') AS trials_ok
FROM sweeps sw
JOIN gpus g ON g.id = sw.gpu_id
JOIN gpu_models gm ON gm.id = g.model_id;

-- Physical GPUs and their model, with the software of their newest sweep.
CREATE VIEW v_gpus AS
SELECT g.id, g.uuid, gm.name AS gpu, gm.cc_major || '.' || gm.cc_minor AS cc, gm.sm_count, g.mem_bytes, g.l2_bytes,
       (SELECT count(*) FROM sweeps sw WHERE sw.gpu_id = g.id) AS sweeps,
       (SELECT sw.nvidia_driver FROM sweeps sw WHERE sw.gpu_id = g.id ORDER BY sw.started_at DESC, sw.id DESC LIMIT 1)
           AS nvidia_driver,
       (SELECT sw.cuda_version FROM sweeps sw WHERE sw.gpu_id = g.id ORDER BY sw.started_at DESC, sw.id DESC LIMIT 1)
           AS cuda_version
FROM gpus g
JOIN gpu_models gm ON gm.id = g.model_id;

-- cuBLAS FP32 (pedantic, no TF32) per GPU model and shape.
CREATE VIEW v_baselines AS
SELECT gm.name AS gpu, gm.cc_major || '.' || gm.cc_minor AS cc, gm.sm_count, s.batch, s.m, s.n, s.k, s.layout,
       b.cublas_ms, 2.0 * s.batch * s.m * s.n * s.k / (b.cublas_ms * 1e9) AS cublas_tflops, b.sweep_id
FROM baselines b
JOIN gpu_models gm ON gm.id = b.model_id
JOIN shapes s ON s.id = b.shape_id;
