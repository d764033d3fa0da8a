-- gemmtune results database: schema version 1, the base every database starts from.
-- gt_db_open (db/db.c) applies this file to a new database, then db/migrate_<v>.sql for v = 2, 3, ... up to the
-- build's version, then re-creates the views of db/views.sql, and stores the version in PRAGMA user_version.
-- Never edit a released step: add a migrate_<v+1>.sql. Open a database with sqlite3 and start from the views:
-- v_winners (best kernel per GPU model and shape, with its ratio to cuBLAS), v_trials, v_sweeps, v_gpus.

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
    source_hash TEXT NOT NULL,                     -- the kernel's id (gt_kernel_id): FNV-1a 64 of what it compiles from
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
