/* The tests' one fixture builder (tests/fixture.c): databases for the db, export, query, merge, report and loader
 * tests, built through the db API with made-up GPUs, shapes and trials, and small file and SQL helpers for
 * byte-for-byte and row-count comparisons, and a count over a family's default space. */
#ifndef GT_FIXTURE_H
#define GT_FIXTURE_H

#include "db.h"
#include "family.h"

#include <stddef.h>

/* A made-up GPU: model 0 "NVIDIA H200" 9.0 x132, model 1 "NVIDIA H100 80GB HBM3" 9.0 x132, model 2 "NVIDIA A100"
 * 8.0 x108, model 3 "NVIDIA B200" 10.0 x148, model 4 "NVIDIA RTX PRO 6000 Blackwell ..." 12.0 x188; unit picks
 * the physical GPU (its uuid). */
gt_gpu_info gt_fixture_gpu(int model, int unit);

/* Build a database at path with one sweep on gt_fixture_gpu(model, unit): for each of the shapes
 * 1024^3, 2048^3, 4096x4096x1024 (nn) and 2048^3 (tn): three ok trials of tile2d candidates, one failed trial,
 * a cuBLAS baseline and the winner. speed scales every time (0.5 = twice as fast). Returns 0 or -1. */
int gt_fixture_db(const char *path, int model, int unit, double speed);

/* One sweep on g into the database at path (created if needed) that stores family/params as the winner of s,
 * median ms. hash NULL: the hash of the rendered source in s's layout, as the tuner stores it. Returns 0, or -1
 * with the reason printed. */
int gt_fixture_winner(const char *path, const gt_gpu_info *g, const gt_shape *s, const char *family,
                      const char *params, const char *hash, double ms);

/* A version-1 database as the first release wrote it (the embedded schema.sql at user_version 1): GPU "Old GPU"
 * 8.6 x84, one sweep, shape 64^3 nt, one ok tile2d trial (BM=64,BN=64,BK=8,TM=8,TN=8) at 0.5 ms, a cuBLAS baseline at
 * 0.25 ms, the winner. Returns 0 or -1. */
int gt_fixture_v1_db(const char *path);

/* The first column of the first row of sql on the database at path, opened read-only; LLONG_MIN when the file
 * or the query fails. */
long long gt_fixture_sql_int(const char *path, const char *sql);

/* Whole file into a malloc'd buffer (NULL when unreadable); *n its size. */
unsigned char *gt_fixture_slurp(const char *path, size_t *n);
/* 1 when both files exist and hold the same bytes. */
int gt_fixture_same_bytes(const char *a, const char *b);
/* Copy a file byte for byte; 0 or -1. */
int gt_fixture_copy(const char *from, const char *to);
/* Write text to a file; 0 or -1. */
int gt_fixture_write(const char *path, const char *text, size_t n);
/* Every row of every table (in a stable order) as malloc'd text, for before/after comparisons. */
char *gt_fixture_dump(const char *path);
/* Remove path and its -wal, -shm, -journal companions. */
void gt_fixture_rm(const char *path);

/* Flip bytes of the root page of the named index of the database at path, as a damaged disk would. 0 or -1. */
int gt_fixture_damage_index(const char *path, const char *index);

/* The environment prefix of a shell command that preloads this build's libgemmtune_cublas.so (then also, which may
 * be "") into a child. An ASan build's library needs the ASan runtime loaded first; the CUDA runtime's leaks in a
 * child are not a test's business. */
void gt_fixture_preload_env(char *buf, size_t n, const char *also);

/* A text file's contents, NUL-terminated (NULL when unreadable). Caller frees. */
char *gt_fixture_text(const char *path);

/* The points of f's default space on lim whose parameter `name` is not 0 (a variant the space must not list, as
 * EVEN); *total, when given, the space's points. */
int gt_fixture_space_with(const gt_family *f, const gt_limits *lim, const char *name, int *total);

#endif
