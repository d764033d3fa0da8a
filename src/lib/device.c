/* The GPU model and limits of a CUDA device from its properties (src/lib/device.h). Tested by tests/test_loader.c. */
#include "device.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

gt_limits gt_device_limits(const struct cudaDeviceProp *p)
{
    return (gt_limits){.cc_major = p->major, .cc_minor = p->minor, .max_threads_per_block = p->maxThreadsPerBlock,
                       .max_smem_per_block = (int)p->sharedMemPerBlock, .max_smem_optin = (int)p->sharedMemPerBlockOptin,
                       .max_regs_per_block = p->regsPerBlock, .max_regs_per_thread = 255,
                       .sm_count = p->multiProcessorCount};
}

gt_gpu_model gt_device_model(const struct cudaDeviceProp *p)
{
    gt_gpu_model m = {.cc_major = p->major, .cc_minor = p->minor, .sm_count = p->multiProcessorCount};
    snprintf(m.name, sizeof m.name, "%.127s", p->name);
    return m;
}
