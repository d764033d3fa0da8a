/* The CLI's verbs (one src/cli/cmd_<verb>.c each) and the argument helpers they share (src/cli/cli.c).
 * Only main.c and cmd_*.c print and exit; everything they call returns a status. */
#ifndef GT_CLI_H
#define GT_CLI_H

#include "family.h"

#include <stddef.h>
#include <stdio.h>

int gt_cmd_tune(int argc, char **argv);
int gt_cmd_candidates(int argc, char **argv);
int gt_cmd_query(int argc, char **argv);
int gt_cmd_export(int argc, char **argv);
int gt_cmd_import(int argc, char **argv);
int gt_cmd_merge(int argc, char **argv);
int gt_cmd_report(int argc, char **argv);
int gt_cmd_explain(int argc, char **argv);
int gt_cmd_bench(int argc, char **argv);
int gt_cmd_exec(int argc, char **argv);
int gt_cmd_precompile(int argc, char **argv);

/* What `gemmtune exec` says at the end, to out: the calls of cmd served and forwarded (by entry point and reason,
 * from the drop-in's summary file) and, with record, the shapes recorded there. Cannot fail. */
void gt_exec_report(FILE *out, const char *cmd, const char *summary, const char *record);

/* Parse a size list: "1024,2048" (N means N x N x N) and "MxNxK" items, each dimension 1..1048576.
 * Returns the count (> 0) with a malloc'd array in *out, or -1 with a message in err. */
int gt_cli_parse_sizes(const char *text, gt_shape **out, char *err, size_t errlen);

/* Parse a size list for tune and bench: what gt_cli_parse_sizes takes, items optionally with a layout
 * ("1000x1000x1000:tn"), or "@FILE" naming a file of such items (one or more per line, '#' comments, and a call
 * count and key=value fields after an item with a layout: the loader's record file, docs/LOADER.md; a regular file
 * of at most GT_FILE_MAX_TEXT bytes). Where every item of a file has a call count, the shapes come heaviest first
 * (calls x FLOPs), so a sweep's budget goes first where the program spends its time. Items all with a layout
 * (*with_layout = 1) or all without.
 * Returns the count with a malloc'd array in *out, or -1 with a message naming the file and line. */
int gt_cli_parse_size_list(const char *text, gt_shape **out, int *with_layout, char *err, size_t errlen);

/* A path named on the command line or in the environment (what names it: "-o", "--db"): refused when it holds a
 * control character, which no file name of ours needs and which would reach a terminal or a script raw.
 * 0, or -1 with err. */
int gt_cli_check_path(const char *what, const char *path, char *err, size_t errlen);

/* Parse a GPU list "0" or "0,1,3" into ids[max]. Returns the count or -1 with a message. */
int gt_cli_parse_gpus(const char *text, int *ids, int max, char *err, size_t errlen);

/* Parse a layout list "nn,tn" into (ta, tb) pairs: lay[i] = ta*2 + tb. Returns the count or -1. */
int gt_cli_parse_layouts(const char *text, int *lay, int max, char *err, size_t errlen);

/* Parse a positive integer argument (1..max). Returns 0 or -1 with a message naming opt. */
int gt_cli_parse_int(const char *opt, const char *text, long max, long *out, char *err, size_t errlen);

/* Parse a duration "90", "90s", "30m", "8h" into seconds. Returns 0 or -1. */
int gt_cli_parse_duration(const char *text, double *seconds, char *err, size_t errlen);

/* Bytes of GPU memory a sweep of shape s holds: operands, validation buffers, the 2 x L2 flush and a reserve. */
double gt_cli_sweep_bytes(const gt_shape *s, long long l2_bytes);

/* Do shapes[0..n) fit in the memory of the GPU named gpu (mem_bytes, l2_bytes as its worker reported them)?
 * 0 when they do, with msg saying what the largest needs and which square sizes fit; -1 when one does not, with
 * msg naming it, its need, the GPU's memory and the largest square size that fits. Cannot fail otherwise. */
int gt_cli_check_memory(const char *gpu, long long mem_bytes, long long l2_bytes, const gt_shape *shapes, int n,
                        char *msg, size_t msglen);

#endif
