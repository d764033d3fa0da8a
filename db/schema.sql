-- gemmtune results database, schema version 1 (PRAGMA user_version = 1).
-- Open it with sqlite3 and start from the views: v_winners (the best kernel per GPU model and shape, with its
-- ratio to cuBLAS) and v_trials (every measured candidate).

CREATE TABLE IF NOT EXISTS gpu_models (            -- winners are keyed by model, not by device index
    id        INTEGER PRIMARY KEY,
    name      TEXT    NOT NULL,                    -- "NVIDIA H200"
    cc_major  INTEGER NOT NULL,
    cc_minor  INTEGER NOT NULL,
    sm_count  INTEGER NOT NULL,
    UNIQUE (name, cc_major, cc_minor, sm_count)
);

CREATE TABLE IF NOT EXISTS gpus (                  -- one physical GPU
    id        INTEGER PRIMARY KEY,
    model_id  INTEGER NOT NULL REFERENCES gpu_models(id),
    uuid      TEXT    NOT NULL UNIQUE,
    mem_bytes INTEGER,
    l2_bytes  INTEGER
);

CREATE TABLE IF NOT EXISTS sweeps (                -- one run of `gemmtune tune` on one GPU (or one merged source)
    id              INTEGER PRIMARY KEY,
    gpu_id          INTEGER NOT NULL REFERENCES gpus(id),
    started_at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    host            TEXT,
    command         TEXT,
    gemmtune_version TEXT,
    driver_version  INTEGER,
    cuda_version    INTEGER,
    nvrtc_version   INTEGER,
    sm_clock_mhz    INTEGER,
    origin          TEXT    NOT NULL DEFAULT 'local' -- 'local', or where merge/import took it from
);

CREATE TABLE IF NOT EXISTS shapes (
    id      INTEGER PRIMARY KEY,
    m       INTEGER NOT NULL CHECK (m > 0),
    n       INTEGER NOT NULL CHECK (n > 0),
    k       INTEGER NOT NULL CHECK (k > 0),
    layout  TEXT    NOT NULL CHECK (layout IN ('nn', 'nt', 'tn', 'tt')),
    UNIQUE (m, n, k, layout)
);

CREATE TABLE IF NOT EXISTS candidates (
    id          INTEGER PRIMARY KEY,
    family      TEXT NOT NULL,
    params      TEXT NOT NULL,                     -- "BM=128,BN=128,BK=8,TM=8,TN=8"
    source_hash TEXT NOT NULL,                     -- FNV-1a 64 of the rendered source
    UNIQUE (family, params, source_hash)
);

CREATE TABLE IF NOT EXISTS trials (
    id           INTEGER PRIMARY KEY,
    sweep_id     INTEGER NOT NULL REFERENCES sweeps(id),
    shape_id     INTEGER NOT NULL REFERENCES shapes(id),
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    status       TEXT    NOT NULL,                 -- ok wrong compile_error resources launch_error faulted timeout not_applicable
    message      TEXT,
    median_ms    REAL,
    min_ms       REAL,
    max_ms       REAL,
    tflops       REAL,
    rel_err      REAL,                             -- max |C - C_cublas| / (|alpha| |A||B| + |beta C|), per element
    regs         INTEGER,
    spill_bytes  INTEGER,
    compile_s    REAL,
    reps         INTEGER,
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX IF NOT EXISTS trials_by_shape ON trials (shape_id, candidate_id);

CREATE TABLE IF NOT EXISTS baselines (             -- cuBLAS FP32 (pedantic) on the same GPU model and shape
    model_id   INTEGER NOT NULL REFERENCES gpu_models(id),
    shape_id   INTEGER NOT NULL REFERENCES shapes(id),
    sweep_id   INTEGER NOT NULL REFERENCES sweeps(id),
    cublas_ms  REAL    NOT NULL,
    PRIMARY KEY (model_id, shape_id)
);

CREATE TABLE IF NOT EXISTS winners (
    model_id     INTEGER NOT NULL REFERENCES gpu_models(id),
    shape_id     INTEGER NOT NULL REFERENCES shapes(id),
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    sweep_id     INTEGER NOT NULL REFERENCES sweeps(id),
    median_ms    REAL    NOT NULL,
    spread_pct   REAL,                             -- (max - min) / median of the final re-timing, in percent
    PRIMARY KEY (model_id, shape_id)
);

CREATE TABLE IF NOT EXISTS cubins (                -- compiled kernels, so an identical sweep compiles nothing
    source_hash   TEXT    NOT NULL,
    arch          TEXT    NOT NULL,
    nvrtc_version INTEGER NOT NULL,
    options       TEXT    NOT NULL,
    cubin         BLOB    NOT NULL,
    regs          INTEGER,
    spill_bytes   INTEGER,
    created_at    TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (source_hash, arch, nvrtc_version, options)
);

CREATE VIEW IF NOT EXISTS v_winners AS
SELECT gm.name AS gpu, gm.cc_major || '.' || gm.cc_minor AS cc, gm.sm_count,
       s.m, s.n, s.k, s.layout, c.family, c.params,
       w.median_ms, 2.0 * s.m * s.n * s.k / (w.median_ms * 1e9) AS tflops,
       b.cublas_ms, 2.0 * s.m * s.n * s.k / (b.cublas_ms * 1e9) AS cublas_tflops,
       b.cublas_ms / w.median_ms AS ratio_vs_cublas, w.spread_pct, w.sweep_id
FROM winners w
JOIN gpu_models gm ON gm.id = w.model_id
JOIN shapes s ON s.id = w.shape_id
JOIN candidates c ON c.id = w.candidate_id
LEFT JOIN baselines b ON b.model_id = w.model_id AND b.shape_id = w.shape_id;

CREATE VIEW IF NOT EXISTS v_trials AS
SELECT t.id, gm.name AS gpu, s.m, s.n, s.k, s.layout, c.family, c.params, t.status, t.median_ms, t.tflops,
       t.rel_err, t.regs, t.spill_bytes, t.message, t.sweep_id, t.created_at
FROM trials t
JOIN sweeps sw ON sw.id = t.sweep_id
JOIN gpus g ON g.id = sw.gpu_id
JOIN gpu_models gm ON gm.id = g.model_id
JOIN shapes s ON s.id = t.shape_id
JOIN candidates c ON c.id = t.candidate_id;
