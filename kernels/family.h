/* Kernel families: parameter spaces, legality constraints, launch geometry and rendering.
 * Plain C, nothing CUDA: everything here runs (and is tested) on a machine without a GPU.
 * Each family lives in kernels/<name>.c and defines `const gt_family gt_family_<name>`;
 * the Makefile generates the registry from those files. A family is a descriptor: what it needs to be built,
 * launched, given as workspace and checked against is said here, and generic code (tuner/, src/lib/, db/) reads
 * those fields; it never tests a family's name. docs/ARCHITECTURE.md shows how to add one. */
#ifndef GT_FAMILY_H
#define GT_FAMILY_H

#include "gt_types.h"

#include <stdalign.h> /* alignas, in C and in C++ (the CPU emulator's driver includes this header) */
#include <stddef.h>
#include <stdint.h>

#define GT_MAX_PARAMS 16 /* tunables per family */
#define GT_MAX_VALUES 32 /* values per tunable in a default space */

/* Parameter values, in the order of the family's params[]. */
typedef struct {
    int v[GT_MAX_PARAMS];
} gt_params;

/* How to launch one candidate on one shape. A workspace of ws_bytes is passed to gt_gemm when non-zero; its first
 * ws_zero bytes are zeroed on the stream before every launch (stream-K's tile counters). splitk > 1 means gt_gemm
 * writes partial sums to the workspace and gt_splitk_reduce (grid rgrid, block rblock) folds them into C. */
typedef struct {
    unsigned grid[3], block[3];
    unsigned smem;      /* dynamic shared memory bytes */
    int splitk;
    size_t ws_bytes, ws_zero;
    unsigned rgrid[3], rblock[3];
} gt_launch;

/* Per-call host state a family's launch_hook supplies for one launch of gt_gemm: launch attributes as plain ints,
 * and kernel parameters appended, in order, after gt_gemm's own (GT_GEMM_ARGS of templates/common.cuh: 12 for one
 * GEMM, 15 for a batched kernel), each held as bytes here (a TMA descriptor built from the call's pointers, a
 * struct of the call's values). gt_launch_extra_add appends one. Plain C: src/lib/kernel.c turns it into the
 * launch. */
#define GT_LAUNCH_MAX_EXTRA 8         /* extra kernel parameters */
#define GT_LAUNCH_EXTRA_BYTES 1024    /* their bytes together, alignment padding included */
typedef struct {
    unsigned cluster[3];              /* thread-block cluster dims (sm_90 on), each dividing the grid's; all 0: no
                                         cluster (a plain launch, as without a hook) */
    int nextra;                       /* parameters appended */
    unsigned offset[GT_LAUNCH_MAX_EXTRA], size[GT_LAUNCH_MAX_EXTRA]; /* parameter i: size bytes at bytes + offset */
    alignas(64) unsigned char bytes[GT_LAUNCH_EXTRA_BYTES]; /* 64: a CUtensorMap's alignment */
} gt_launch_extra;

/* Append a kernel parameter of size bytes, copied from value, at the next offset that is a multiple of align (a
 * power of two, at most 64: the parameter's own alignment in the kernel). Returns 0, or -1 when the parameters or
 * their bytes would exceed GT_LAUNCH_MAX_EXTRA or GT_LAUNCH_EXTRA_BYTES, or align is no such power (x untouched). */
int gt_launch_extra_add(gt_launch_extra *x, const void *value, size_t size, size_t align);

typedef struct {
    const char *name;            /* as in the template: BM, BN, ... */
    const char *doc;             /* unit or meaning */
    int nvalues;                 /* values in the default space */
    int values[GT_MAX_VALUES];
    int optional;                /* added after kernels were stored: a params text may omit it, meaning values[0],
                                    and the canonical text omits it at values[0], so stored texts keep naming the
                                    same kernel */
    int launch_only;             /* only launch() reads it (skinny's FILL, which sizes the K split): gt_render leaves
                                    it out, so candidates that differ in it alone share one source, id and cubin,
                                    and a sweep compiles them once */
} gt_param;

/* How a candidate becomes runnable. */
typedef enum {
    GT_BUILD_NVRTC = 0, /* template_name rendered with the params as #defines, compiled by NVRTC, cubin loaded */
    GT_BUILD_NONE       /* nothing to build: the library named by `backend` runs it */
} gt_build;

/* Where a family's candidates for a shape come from. */
typedef enum {
    GT_SPACE_STATIC = 0, /* the params' value lists, filtered by legal() and in_space(); known without a GPU */
    GT_SPACE_DEVICE      /* asked of the backend on the GPU, per shape and layout (a library's own heuristic) */
} gt_space;

/* What a candidate's result is validated against (tuner/measure.c), least strict first. */
typedef enum {
    GT_REF_CUBLAS_FP32 = 0, /* cuBLAS SGEMM, pedantic FP32: per-element error under 16 sqrt(K) eps of |A||B| */
    GT_REF_FP64             /* cuBLAS DGEMM on the same inputs: the error may not exceed cuBLAS FP32's on them */
} gt_reference;

/* The arithmetic a family promises, one row a class: X(ID, name, the least reference its families are validated
 * against, what it promises). Stored with every trial and winner by name; the loader serves a class only to a
 * handle that asks for it, besides the first row, FP32, which every caller is served. Everything said of a class
 * comes from its row: the enum gt_math (GT_MATH_<ID>, in this order), gt_math_name and gt_math_parse, the
 * validation (gt_family_reference), the CLI's help (GT_MATH_HELP), and the public gemmtune_math
 * (GEMMTUNE_MATH_FP32 + the row's place, src/lib/loader_db.c). So a class is its families' files plus a row here. */
#define GT_MATH_CLASSES(X)                                                                                      \
    X(FP32, "fp32", GT_REF_CUBLAS_FP32, "IEEE FP32 products and sums, as cuBLAS SGEMM pedantic")                \
    X(TF32X3, "tf32x3", GT_REF_FP64,                                                                            \
      "FP32 accuracy from tensor-core products (split TF32, or exact INT8 residues), checked against FP64")

#define GT_MATH_ENUM_(id, name, ref, doc) GT_MATH_##id,
typedef enum {
    GT_MATH_CLASSES(GT_MATH_ENUM_)
    GT_MATH_COUNT
} gt_math;
#undef GT_MATH_ENUM_

/* The classes as help lines, one string literal: "\n  fp32: IEEE FP32 ..." each. */
#define GT_MATH_HELP_(id, name, ref, doc) "\n  " name ": " doc
#define GT_MATH_HELP GT_MATH_CLASSES(GT_MATH_HELP_)

/* The class's name from its row ("fp32"); NULL past the end. */
const char *gt_math_name(gt_math m);
/* Parse a math class name. Returns 0, or -1 for an unknown name. */
int gt_math_parse(const char *text, gt_math *out);

/* A set of math classes (the database's filters): one bit per class. */
#define GT_MATH_BIT(m) (1u << (unsigned)(m))
#define GT_MATH_ALL ((1u << GT_MATH_COUNT) - 1u)
/* Parse "all" (GT_MATH_ALL) or a class name (its bit) into *set. Returns 0, or -1 for other text. */
int gt_math_set_parse(const char *text, unsigned *set);
/* The set as gt_math_set_parse reads it: "all" for every class, else its classes' names joined by ',' ("" for
 * none). Returns buf (n >= 64 holds every set). Cannot fail (truncates). */
const char *gt_math_set_name(unsigned set, char *buf, size_t n);

struct gt_work;

typedef struct gt_family {
    const char *name;            /* as `gemmtune candidates` prints it */
    const char *doc;
    gt_build build;
    const char *template_name;   /* GT_BUILD_NVRTC: file in templates/, e.g. "tile2d.cu" */
    const char *backend;         /* NULL: the built kernel is launched; else the library backend that runs a
                                    candidate (src/lib/backend.h), e.g. "cublas" */
    gt_space space;
    gt_math math;
    gt_reference reference;
    int arch_specific;           /* 1: uses features of one architecture only (sm_90a's wgmma), so its source is
                                    compiled for "sm_XYa" (gt_family_arch) and legal() admits that one arch */
    int vendor;                  /* 1: the vendor's own algorithms (cublas), the yardstick ours are served against;
                                    every other family, whoever runs part of it, is "our own" in reports */
    int exact_only;              /* 1: its verdict against the reference holds for the shape it was validated on
                                    only (ozaki: its error does not shrink with K as SGEMM's does), so the loader
                                    serves it for that shape and never as a tuned neighbour of another */
    int screen_full;             /* 1: much of its time does not scale with K (passes over the operands and C),
                                    so a screen on a proxy of shorter K would misjudge it: the tuner screens it at
                                    the full shape and ranks that time scaled to the proxy's K (tuner/search.c) */
    int batched;                 /* 1: runs a strided batch in one launch: a built family's gt_gemm starts with
                                    GT_BATCH_OFFSET (templates/common.cuh), so grid z walks the batch wherever
                                    launch() leaves z at 1 and needs no workspace (gt_family_launch); a library
                                    family's backend runs batches itself */
    int bias_epilogue;           /* 1: where a launch has no workspace (ws_bytes 0: one GEMM, no split), gt_gemm
                                    reads a bias from ws: ws non-NULL, with beta 0, writes C = alpha AB + bias[j] (a
                                    value per column j of row-major C) as fmaf(1, bias[j], alpha x), bit for bit
                                    what a pass writing the bias into C and the same kernel at beta 1 write. Every
                                    other launch passes ws NULL there (src/lib/loader_call.c gt_loader_sgemm_bias) */
    int nparams;
    gt_param params[GT_MAX_PARAMS];
    /* 1 if p is a legal candidate under lim; otherwise 0 and a reason in why. */
    int (*legal)(const gt_params *p, const gt_limits *lim, char *why, size_t whylen);
    /* Launch geometry for shape s on a GPU of sms SMs (0: unknown; a persistent grid then assumes one), and the
     * workspace (ws_bytes, ws_zero) a call needs. Cannot fail for a legal p. */
    void (*launch)(const gt_params *p, const gt_shape *s, int sms, gt_launch *out);
    /* 1 if p computes call correctly (alignment, ld requirements of vector paths); NULL means always. */
    int (*applicable)(const gt_params *p, const gt_call *call);
    /* Default-space trimming on top of legal(): 1 keeps a legal point in the sweep, 0 drops it as redundant or
     * hopeless (reason in why). Only enumeration asks; a stored or requested kernel needs legal() alone.
     * NULL keeps every legal point. */
    int (*in_space)(const gt_params *p, char *why, size_t whylen);
    /* NULL, or: sets the params of p that follow from the call rather than from the search (multistage's EVEN, 1
     * where the call is whole tiles: the same results from a kernel with no edge code, 0.35-0.9x the compile). A
     * sweep specializes each point of the space for its shape's tight call before it plans and compiles it
     * (tuner/plan.c), and a winner crossed to another shape for that one (tuner/tune.c); the stored params name
     * the variant that ran, and applicable() refuses any call a variant cannot compute. Returns 1, or 0 where
     * p's variant is another point's too (a param that means nothing for the call, set to its first value: the
     * plan keeps that other point only). Cannot fail. */
    int (*specialize)(gt_params *p, const gt_call *call);
    int test_only;               /* deliberately broken families: never enumerated unless asked by name */
    const char *builtin_params;  /* non-NULL on the one family whose kernel with these params is the library's
                                    built-in kernel, correct for every call (the loader's fallback where cuBLAS is
                                    not linked in or not wanted): gt_family_builtin finds it */
    int order;                   /* its place in the registry's stable order (the candidates listing, the sweep):
                                    1.. along the seeds' optimisation path (naive 1 .. multistage 8); 0: after
                                    those, by name */
    /* NULL for a family whose kernel needs only gt_gemm's own arguments (every built-in one). Otherwise called by
     * gt_kernel_launch, the one launch path of the loader and the tuner's worker, on the host before each launch
     * of gt_gemm for a call: a the call's device arguments as that launch gets them (for a batch walked in several
     * launches, A, B and C advanced to the launch's first matrix and batch its count), stream its cudaStream_t, L
     * its geometry. It fills out (zeroed before the call) with the launch's extra parameters and cluster.
     * Lifetime: out is the caller's and lives until that launch is enqueued, which copies the parameters, so a
     * hook keeps no state of a call and must not synchronise or allocate; it may run on several threads at once,
     * and inside stream capture. Failure: a hook that cannot serve the call (a pointer or ld its descriptor cannot
     * take; what applicable() can see, it should refuse there, so selection never picks it) returns -1 with a
     * reason in err; the call is then not run by this kernel (nothing of it is enqueued when the first launch's
     * hook refuses) and the launch reports the error: never a wrong result. Returns 0. */
    int (*launch_hook)(const gt_params *p, const gt_launch *L, const gt_args *a, void *stream, gt_launch_extra *out,
                       char *err, size_t errlen);
    /* What the tuner's cost model (tuner/model.h) needs of a block beyond its launch: its tile of C and an estimate
     * of its registers per thread. NULL: gt_family_work's default (BM x BN params, registers from the results per
     * thread). */
    void (*work)(const gt_params *p, struct gt_work *out);
} gt_family;

/* A block's work as the cost model sees it: tile_m x tile_n results of C (before any K split), regs registers per
 * thread (an estimate: the compiled count is known only after compiling). */
typedef struct gt_work {
    int tile_m, tile_n, regs;
    double rate; /* the share of the model's FMA rate the block's products reach (0: all of it): a tensor-core
                    family's narrow MMA tiles reach less of theirs than wide ones */
} gt_work;

/* f's work hook, or the default: tile from the params BM and BN (a family without them: the whole of C over the
 * launch's blocks, as a square), registers 28 + 1.25 r + 4 sqrt(r) for r results per thread (at most 255). L is
 * p's launch on s. Cannot fail. */
void gt_family_work(const gt_family *f, const gt_params *p, const gt_shape *s, const gt_launch *L, gt_work *out);

/* What f's candidates are validated against: its own reference, or its class's where that is stricter (a family
 * of a class that promises FP32 accuracy by other means is checked against FP64 even if it says less). Cannot fail. */
gt_reference gt_family_reference(const gt_family *f);

/* Registry (generated from the files in kernels/, then any registered). Lookup returns NULL for an unknown name. */
int gt_family_count(void);
/* Add a family from outside kernels/ (call from a constructor, before any lookup; the tests' broken families).
 * Returns 0, or -1 when the name is taken or the table is full. */
int gt_family_register(const gt_family *f);
const gt_family *gt_family_at(int i);
const gt_family *gt_family_find(const char *name);
/* The family that provides the built-in kernel (the first, in registry order, whose builtin_params is set; test
 * families never), its params text in *params. NULL when no family states one. */
const gt_family *gt_family_builtin(const char **params);

/* The arch a family's source is compiled for on a GPU of arch ("sm_90"): arch itself, or with the family's
 * arch_specific, the arch's own "sm_XYa" ("sm_90a", also for "sm_90f"). Writes into out (n >= 16 always suffices).
 * Cannot fail. */
void gt_family_arch(const gt_family *f, const char *arch, char *out, size_t n);

/* Parse an architecture name: "sm_", the compute capability's major and minor digits run together (two or three
 * digits, no leading zero: "sm_90", "sm_100", "sm_121"), at most one suffix letter 'a' or 'f' ("sm_90a",
 * "sm_100f"), and nothing after. Fills major, minor and, when suffix is not NULL, the suffix letter ('\0' for
 * none). Returns 0, or -1 for any other text; whether such an architecture exists is gt_limits_for_cc's to say. */
int gt_arch_parse(const char *arch, int *major, int *minor, char *suffix);
/* Limits of the real architecture of compute capability major.minor (sm_70 .. sm_121: gt_arch_list names them),
 * for enumeration and checks without a GPU; sm_count is 0. Returns 1, or 0 (out untouched) for a compute
 * capability that is no architecture this gemmtune knows. */
int gt_limits_for_cc(int major, int minor, gt_limits *out);
/* gt_arch_parse, then gt_limits_for_cc (a suffix does not change the limits). Returns 1, or 0 for malformed text
 * or an unknown architecture. */
int gt_limits_for_arch(const char *arch, gt_limits *out);
/* The architectures gt_limits_for_cc knows, "sm_70, sm_72, ..., sm_121", for messages. Cannot fail (truncates). */
void gt_arch_list(char *out, size_t n);

/* Enumerate the family's default space in a stable order, keeping points that are legal and in_space. Calls fn for each; fn returning
 * non-zero stops early. Returns the number of legal candidates visited. */
typedef int (*gt_enum_fn)(const gt_family *f, const gt_params *p, void *ctx);
int gt_enumerate(const gt_family *f, const gt_limits *lim, gt_enum_fn fn, void *ctx);

/* Canonical text of params: "BM=64,BN=64,BK=8,TM=8,TN=8" (an optional param at its first value left out). Returns
 * the length written (truncated to n). */
int gt_params_format(const gt_family *f, const gt_params *p, char *buf, size_t n);
/* Parse the canonical text back. Returns 0 on success, -1 with a message in err. */
int gt_params_parse(const gt_family *f, const char *text, gt_params *p, char *err, size_t errlen);
/* Value of the named param, or def when the family has no such param. */
int gt_param_get(const gt_family *f, const gt_params *p, const char *name, int def);

/* Layout text "nn", "nt", "tn", "tt" <-> (ta, tb). Parse returns 0 or -1. */
int gt_layout_parse(const char *text, int *ta, int *tb);
const char *gt_layout_name(int ta, int tb);

/* Render CUDA source: #define lines for every param (but launch_only ones) and the layout, with batched (a shape whose batch is above 1)
 * also `#define GT_BATCHED 1` (gt_gemm then takes the batch's strides and walks grid z: templates/common.cuh; one
 * GEMM's source is the same as before batches existed), then the template text. Returns a malloc'd string (caller
 * frees) or NULL if the template is missing (message in err). */
char *gt_render(const gt_family *f, const gt_params *p, int ta, int tb, int batched, char *err, size_t errlen);

/* What a candidate's source depends on besides its params, as one int: ta * 2 + tb, plus 4 for a batch (the
 * compile pool's key). Cannot fail. */
static inline int gt_variant(const gt_shape *s) { return s->ta * 2 + s->tb + (gt_shape_batch(s) > 1 ? 4 : 0); }

/* Template text by file name ("tile2d.cu", "common.cuh", "measure.cu"): the ones embedded from templates/, then
 * registered ones; NULL when absent. */
const char *gt_template_text(const char *name);
/* Name of the i-th template file, NULL past the end (headers are the ones ending in .cuh). */
const char *gt_template_text_name(int i);
/* Add a template (text must outlive the program; call before main). Returns 0, or -1 when full. */
int gt_template_register(const char *name, const char *text);

/* 64-bit FNV-1a of a string, as 16 hex digits into out[17]. */
void gt_hash_hex(const char *text, size_t len, char out[17]);

/* A kernel's identity (kernels/identity.c), the key of the cubin cache, of the resume lookup and of a stored
 * candidate (its source_hash): 16 hex digits of FNV-1a 64 over every text it compiles from, namely the rendered
 * source, then each header it includes with `#include "name"`, transitively, depth first in order of first
 * inclusion, each once, as "\n//gemmtune header " + name + NUL + text. So an edit to a header changes the id of
 * every kernel that includes it, and of no other. The header's text comes from header(name, ctx) (NULL: not
 * found; it then enters by name alone). Cannot fail. */
typedef const char *(*gt_header_fn)(const char *name, void *ctx);
void gt_source_id_with(const char *src, gt_header_fn header, void *ctx, char out[17]);
/* The same over the embedded (and registered) templates: what NVRTC is given (src/lib/compile.c). */
void gt_source_id(const char *src, char out[17]);
/* The id of family f's kernel p in layout (ta, tb), for a batch when batched: for a built family (GT_BUILD_NVRTC) gt_source_id of its render,
 * which *src receives when src is non-NULL (caller frees); for a family with no source (GT_BUILD_NONE: a vendor
 * library's algorithm) FNV-1a 64 of "family:params" in canonical params text, which names what it replays and does
 * not change with templates. 0, or -1 with err when the template is missing. The _with form takes the headers
 * from header (NULL: the embedded ones), for tests that edit one. */
int gt_kernel_id(const gt_family *f, const gt_params *p, int ta, int tb, int batched, char id[17], char **src,
                 char *err, size_t errlen);
int gt_kernel_id_with(const gt_family *f, const gt_params *p, int ta, int tb, int batched, gt_header_fn header,
                      void *ctx, char id[17], char **src, char *err, size_t errlen);
/* 1 when a stored kernel is stale: this build's id of (family, params, layout, batched) differs from the stored id, i.e. what
 * it compiles from changed since it was stored, so its timings are not this kernel's. 0 when it matches; for a
 * family with no source (it replays what its params say, which cannot change under it); and when it cannot be
 * judged (a family this build does not know, params it cannot parse, a missing template: readers refuse those for
 * their own reasons). Cannot fail. */
int gt_kernel_stale(const char *family, const char *params, int ta, int tb, int batched, const char *id);

/* A legal() or in_space() refusing point p: the reason into why (n bytes), `return GT_REJECT("...", ...);` inside a
 * function with parameters why and n. n == 0 formats nothing: gt_enumerate, which walks every combination of a
 * family's values (over a million for multistage) and reads no reason, asks so. */
#define GT_REJECT(...) return (n ? snprintf(why, n, __VA_ARGS__) : 0), 0

/* The block-resource part of a legal(): threads a whole number of warps in [64, max], static shared memory
 * within the non-opt-in limit, and an estimate of registers per thread under both the per-thread limit and the
 * share of the register file that `threads` leaves each (the cap __launch_bounds__(threads) imposes).
 * 1 when all hold; otherwise 0 and the reason in why (naming "threads", "shared memory" or "registers"). */
int gt_block_fits(long threads, long static_smem, long regs, const gt_limits *lim, char *why, size_t whylen);

/* The block-resource part of a legal() for a kernel with dynamic shared memory and __launch_bounds__(threads,
 * minb): threads a whole number of warps in [64, max], dyn_smem within the opt-in limit, and an estimate of
 * registers per thread under the share of the register file that minb blocks leave each (at most the per-thread
 * limit). 1 when all hold; otherwise 0 and the reason in why (naming "threads", "shared memory" or "registers"). */
int gt_block_fits_dynamic(long threads, int minb, long dyn_smem, long regs, const gt_limits *lim, char *why,
                          size_t whylen);

/* Blocks of `threads` threads, ~regs registers each (rounded up to 8) and smem bytes of shared memory that one SM
 * of lim holds at once (2,048 threads, the register file, the opt-in shared memory, 32 blocks); at least 1. The
 * cost model's occupancy, and tf32x3wg's PT grid. */
int gt_blocks_per_sm(int threads, int regs, long smem, const gt_limits *lim);

/* The params f runs call with, from a kernel's stored params p (a winner's): p where f can run it for call, else
 * the variant f's specialize() gives for call where that one can (an EVEN=1 winner served at a call of partial
 * tiles, or a padded ld: its twin with edge code, the same results). 1 with *out set, or 0 when neither can (with
 * p legal; applicability and a batch in one launch are judged). What the loader serves and what a sweep's
 * cross-timing times (tuner/tune.c), so both judge the same kernel. Cannot fail. */
int gt_family_params_for_call(const gt_family *f, const gt_params *p, const gt_call *call, const gt_limits *lim,
                              gt_params *out);

/* 1 when call's C (m x n) is whole tiles of tile_m x tile_n and every operand's start (each matrix's, in a batch)
 * is 16-byte aligned with an ld of whole 16-byte pieces: what a family's variant without edge code needs (its
 * specialize() and applicable(): multistage's and tf32x3wg's EVEN). Cannot fail. */
int gt_call_whole_tiles(const gt_call *call, int tile_m, int tile_n);

/* The most workspace a K split's partial sums may take (splitk partial C's of the shape): a split past it cannot pay
 * off, and a sweep or a call would allocate gigabytes for it. 1 when splitk <= 1 or its partial sums fit in
 * GT_SPLITK_WS_CAP; for a family's applicable(). Cannot fail. */
#define GT_SPLITK_WS_CAP ((size_t)512 << 20)
int gt_splitk_workspace_fits(int splitk, const gt_shape *s);

/* Stream-K's launch (templates/streamk.cuh's schedule): a persistent grid of per_sm blocks per SM, never more
 * blocks than K tiles of work; the tiles' counters (zeroed by each launch) and two partial-tile slots per block as
 * workspace, none when every tile is data-parallel. Replaces the grid and workspace gt_launch_tiles set. sms <= 0
 * (a plan ahead of the GPU, which cannot know whether a shape's tiles fill whole waves): a block a tile, no
 * workspace, so that the plan keeps the batches some GPU runs in one launch (precompile then compiles their kernels
 * too; the sweep asks again with the GPU's SMs). */
void gt_launch_stream_k(const gt_shape *s, int bm, int bn, int bk, int per_sm, int sms, gt_launch *out);

/* The launch() of a tiled kernel: a grid over BM x BN tiles of C (flat: one dimension, tile index row-major;
 * otherwise x over column tiles and y over row tiles), threads per block, dynamic shared memory, and with
 * splitk > 1 the K slices in grid z, a workspace of splitk partial C's and the reduce kernel's launch. */
void gt_launch_tiles(const gt_shape *s, int bm, int bn, unsigned threads, unsigned smem, int splitk, int flat,
                     gt_launch *out);

/* The sides of C of a family with one small side (skinny, skinny3, skinnyr, skinnyr3, skinnyt, gemv), as its SIDE
 * param says: 0, M small and N large; 1, N small and M large. */
static inline int gt_small_side(int side, const gt_shape *s) { return side ? s->n : s->m; }
static inline int gt_large_side(int side, const gt_shape *s) { return side ? s->m : s->n; }

/* Whether such a family's large operand runs along the large side in layout (ta, tb): op(B) untransposed for SIDE
 * 0, op(A) transposed for SIDE 1 (else it runs along K). */
static inline int gt_large_along_l(int side, int ta, int tb) { return side ? ta : !tb; }

/* Such a family's work hook (gt_family.work): a block of rows of the small side by cols of the large one, regs
 * registers per thread, in C's orientation. */
static inline void gt_side_work(int side, int rows, int cols, int regs, gt_work *out)
{
    out->tile_m = side ? cols : rows;
    out->tile_n = side ? rows : cols;
    out->regs = regs;
}

/* The K split of a family with one small side (skinny, skinnyr, skinnyr3), whose launch() picks it: as many slices
 * as `fill` warps per SM hold over `blocks` blocks of `warps` warps (never more: one block over is a second wave of one
 * block's time), each slice at least two steps of `step` rows of K, at most 64 slices, and few enough that the
 * partial sums (z S L floats, written and read once) stay under a quarter of the large operand's L K; 1 for a batch
 * (its matrices fill the GPU, and grid z walks them). small: S, the small side. */
int gt_skinny_slices(const gt_shape *s, int small, int fill, int warps, int step, long blocks, int sms);

/* The workspace and reduce grid of such a split into z slices, added by the family's own gt_splitk_reduce, which
 * reads the slice count from the workspace: 64 floats of head, then each slice's m x n sums rounded up to 4 floats;
 * a reduce thread per four elements of C, 256 a block. Leaves out untouched where z <= 1. */
void gt_skinny_workspace(const gt_shape *s, int z, gt_launch *out);

/* Most matrices one launch's grid z covers; gt_kernel_launch walks a larger batch in launches of this many. */
#define GT_BATCH_PER_LAUNCH 65535

/* Launch geometry of candidate p for shape s, batch included: f->launch() for one product, then, for a batch,
 * grid z over its matrices (at most GT_BATCH_PER_LAUNCH). Returns 1, or 0 when p cannot run s's batch in one
 * launch (the family is not batched, or this point splits K or needs a workspace), with *out then undefined.
 * Every caller that launches, plans or models a built candidate goes through it. */
int gt_family_launch(const gt_family *f, const gt_params *p, const gt_shape *s, int sms, gt_launch *out);

/* Helper for launch(): integer ceiling division. */
static inline unsigned gt_cdiv(long long a, long long b) { return (unsigned)((a + b - 1) / b); }

#endif
