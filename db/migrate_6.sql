-- Schema version 6 (applied to a version 5 database by a writer's gt_db_open): batched GEMM (issue 26). A shape is
-- `batch` independent products of m x n x k in one call (a strided batch: cublasSgemmStridedBatched,
-- gemmtune_sgemm_strided_batched), tuned and served apart from the single product of the same size. Every shape
-- stored before is one product (batch 1). The table is rebuilt because its UNIQUE constraint gains the column.

CREATE TABLE shapes_v6 (
    id      INTEGER PRIMARY KEY,
    m       INTEGER NOT NULL CHECK (m > 0),
    n       INTEGER NOT NULL CHECK (n > 0),
    k       INTEGER NOT NULL CHECK (k > 0),
    layout  TEXT    NOT NULL CHECK (layout IN ('nn', 'nt', 'tn', 'tt')),
    batch   INTEGER NOT NULL DEFAULT 1 CHECK (batch > 0), -- products per call (1: one GEMM)
    UNIQUE (m, n, k, layout, batch)
);
INSERT INTO shapes_v6 (id, m, n, k, layout, batch) SELECT id, m, n, k, layout, 1 FROM shapes;
DROP TABLE shapes;
ALTER TABLE shapes_v6 RENAME TO shapes;
