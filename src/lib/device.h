/* What gemmtune takes from a CUDA device's properties (cudaGetDeviceProperties): its GPU model and the limits that
 * decide legality, made here once for the loader, the CLI and the tests. Pure functions of the properties, tested
 * without a GPU by tests/test_loader.c (loader_device_*). */
#ifndef GT_DEVICE_H
#define GT_DEVICE_H

#include "gt_types.h"

struct cudaDeviceProp;

/* The device's limits: compute capability, threads, shared memory (per block and opt-in), registers (255 per
 * thread) and SM count. Cannot fail. */
gt_limits gt_device_limits(const struct cudaDeviceProp *p);
/* The device's GPU model: its name (at most 127 bytes), compute capability and SM count. Cannot fail. */
gt_gpu_model gt_device_model(const struct cudaDeviceProp *p);

#endif
