/* The tuner's cost model (tuner/model.c): a candidate's time on a shape, predicted before it is compiled, so that a
 * sweep compiles and screens the likely winners first and stops compiling a family once even its best prediction
 * cannot reach the best time measured. Pure functions of the family descriptors and the GPU's limits; tested by
 * tests/test_model.c. */
#ifndef GT_MODEL_H
#define GT_MODEL_H

#include "family.h"

/* Predicted seconds of candidate f/p on shape s on a GPU of lim (lim->sm_count SMs; 0 is taken as one). Built from
 * what a launch says (blocks, threads, shared memory, workspace) and the block's tile and registers
 * (gt_family_work): the waves of blocks the SMs hold at once, each block's FMAs at the FFMA rate its thread tile
 * allows, its operand bytes at the L2's rate, and the unique bytes and the split-K workspace at DRAM's. An absolute
 * figure only roughly; what the sweep uses is the order within a family and the ratio of two predictions. 0 when
 * p cannot run s (a batch it cannot take in one launch) or f is not built (a library picks its own grid). */
double gt_model_time(const gt_family *f, const gt_params *p, const gt_shape *s, const gt_limits *lim);

#endif
