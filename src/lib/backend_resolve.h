/* How the cublas backend (backend_cublas.c) finds cuBLAS and cuBLASLt: by default the symbols the program links
 * (weakly: without them the backend is absent). libgemmtune_cublas.so sets a resolver that finds the program's own
 * cuBLAS wherever it was loaded (also with RTLD_LOCAL, after the preload was relocated), so vendor winners are
 * served there too, and the backend calls the real cuBLAS directly, never the preload's exported entry points.
 * Not a public interface: the one hook the preload takes from libgemmtune beyond gemmtune.h. Tested by
 * tests/test_vendor.c (vendor_backend_resolver). */
#ifndef GT_BACKEND_RESOLVE_H
#define GT_BACKEND_RESOLVE_H

/* The address of the function called name, or NULL when there is none (yet). Must be thread-safe. */
typedef void *(*gt_symbol_resolver)(const char *name);

/* Use fn to find every cuBLAS and cuBLASLt function from now on; NULL: the linked symbols again. Set it before
 * the backend serves a call (the preload's constructor). Cannot fail. */
void gt_backend_cublas_resolver(gt_symbol_resolver fn);

#endif
