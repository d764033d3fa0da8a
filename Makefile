# gemmtune: `make` builds build/gemmtune, build/libgemmtune.{a,so} and the cuBLAS drop-in
# build/libgemmtune_cublas.so (with its GPU check programs); `make test` runs the CPU tests;
# `make gpu-test` the GPU tests; `make run` a sweep on GPU 0; `make asan` the CPU tests under ASan/UBSan.
# Dependencies come from the system: the CUDA toolkit (NVRTC, cuBLAS, cuBLASLt, cudart), libsqlite3-dev,
# libcjson-dev. Layers, each compiled seeing only the folders below it (docs/ARCHITECTURE.md):
#   src/cli -> tuner -> src/lib -> db -> kernels        (tests see everything)
#   src/preload -> gemmtune.h, bias.h                  (the public API, the bias broadcast and src/lib/backend_resolve.h)

# The version is gemmtune.h's (GEMMTUNE_VERSION_*), nowhere else. SOVERSION changes only when a program built
# against an earlier libgemmtune.so.0 could no longer run against this one (symbol versions keep old entry points:
# src/lib/libgemmtune.map).
VERSION   := $(shell sed -n 's/^\#define GEMMTUNE_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9][0-9]*\).*/\2/p' \
               src/lib/gemmtune.h | paste -sd. -)
SOVERSION := 0
CUDA      ?= /usr/local/cuda
GPU_ARCH  ?= sm_90
BUILD     ?= build
PREFIX    ?= /usr/local
SIZES     ?= 1024,2048
OPT       ?= -O2 -g
SAN       ?=
APT_PKGS  := libsqlite3-dev libcjson-dev gnuplot-nox pkg-config

# A fresh machine builds in parallel by default; `make -j1` still works.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif

CPPFLAGS_ALL := -D_GNU_SOURCE -DGT_VERSION='"$(VERSION)"' -DGT_DEFAULT_ARCH='"$(GPU_ARCH)"' \
                -isystem $(CUDA)/include
# -Wno-missing-field-initializers: a trailing member left out of a positional initializer is zero on purpose
# (gt_shape's batch: 0 reads as one GEMM, so the shapes written before batches existed keep their meaning).
CFLAGS_ALL   := -std=c11 $(OPT) $(SAN) -Wall -Wextra -Wno-missing-field-initializers -Wshadow -fPIC -MMD -MP $(CFLAGS)
LDFLAGS_ALL  := $(SAN) -L$(CUDA)/lib64 -Wl,-rpath,$(CUDA)/lib64 -Wl,-rpath,'$$ORIGIN/lib' $(LDFLAGS)
LIB_LIBS     := -lnvrtc -lcublasLt -lcublas -lsqlite3 -lcjson -lpthread -ldl -lrt -lm
LIBS         := $(LIB_LIBS) -lcudart_static

# What each layer may include.
INC_kernels := -Ikernels
INC_db      := $(INC_kernels) -Idb
INC_lib     := $(INC_db) -Isrc/lib
INC_tuner   := $(INC_lib) -Ituner
INC_cli     := $(INC_tuner) -Isrc/cli -I$(BUILD)/gen
INC_preload := -Isrc/lib -Isrc/preload
INC_tests   := $(INC_cli) -Isrc/preload -Itests -Itests/families

KERNELS_SRC := $(wildcard kernels/*.c)
DB_SRC      := $(wildcard db/*.c)
LIBSRC_SRC  := $(wildcard src/lib/*.c)
TUNER_SRC   := $(wildcard tuner/*.c)
CLI_SRC     := $(filter-out src/cli/main.c,$(wildcard src/cli/*.c))
PRELOAD_SRC := $(wildcard src/preload/*.c)
TEST_SRC    := $(wildcard tests/*.c tests/families/*.c)

obj = $(1:%.c=$(BUILD)/obj/%.o)
# The files defining the entry points that take gemmtune_options, compiled again for libgemmtune.so with their
# symbol versions (src/lib/abi.h).
SYMVER_SRC := src/lib/options.c src/lib/loader.c src/lib/loader_db.c
SYMVER_OBJ := $(SYMVER_SRC:%.c=$(BUILD)/obj/so/%.o)
# The library: the loader and what it needs (families, database, runtime), templates and schema embedded.
LIB_OBJ   := $(call obj,$(KERNELS_SRC) $(DB_SRC) $(LIBSRC_SRC)) $(BUILD)/obj/gen/templates.o $(BUILD)/obj/gen/schema.o \
             $(BUILD)/obj/gen/public.o
TUNER_OBJ := $(call obj,$(TUNER_SRC))
CLI_OBJ   := $(call obj,$(CLI_SRC)) $(BUILD)/obj/gen/configs.o
TEST_OBJ  := $(call obj,$(TEST_SRC)) $(BUILD)/obj/gen/test_templates.o
# The cuBLAS drop-in: its objects, and those of them that need no CUDA (the CPU tests link these too).
PRELOAD_OBJ  := $(call obj,$(PRELOAD_SRC))
PRELOAD_PURE := $(call obj,src/preload/config.c src/preload/decide.c src/preload/lt_decide.c src/preload/log.c)
PRELOAD_BINS := $(BUILD)/libgemmtune_cublas.so $(BUILD)/check_cublas $(BUILD)/check_lt $(BUILD)/preload_overhead \
                $(BUILD)/tests/libfakecublas.so $(BUILD)/tests/nogemmex/libfakecublas.so $(BUILD)/tests/drive_fake \
                $(BUILD)/tests/libfakecublasLt.so $(BUILD)/tests/drive_fake_lt $(BUILD)/tests/preload_cost
ALL_OBJ   := $(LIB_OBJ) $(TUNER_OBJ) $(CLI_OBJ) $(TEST_OBJ) $(BUILD)/obj/src/cli/main.o

.PHONY: all test gpu-test slurm-test run asan clean install deps probe FORCE
.DEFAULT_GOAL := all

all: $(BUILD)/gemmtune $(BUILD)/libgemmtune.a $(BUILD)/libgemmtune.so $(BUILD)/gt_tests $(PRELOAD_BINS) $(BUILD)/time_kernel

# Installs what a fresh Debian/Ubuntu machine lacks, and says so. Nothing third-party is vendored. Every compile
# waits for it (an order-only prerequisite), so `make -j` on a fresh machine cannot race the install.
deps:
	@missing=""; \
	[ -f /usr/include/sqlite3.h ] || missing="$$missing libsqlite3-dev"; \
	[ -f /usr/include/cjson/cJSON.h ] || missing="$$missing libcjson-dev"; \
	command -v gnuplot >/dev/null 2>&1 || missing="$$missing gnuplot-nox"; \
	command -v pkg-config >/dev/null 2>&1 || missing="$$missing pkg-config"; \
	[ -x $(CUDA)/bin/nvcc ] || [ -f $(CUDA)/include/nvrtc.h ] || { echo "gemmtune: no CUDA toolkit at $(CUDA) (set CUDA=...)"; exit 1; }; \
	if [ -n "$$missing" ]; then \
	  echo "gemmtune: installing missing packages:$$missing (apt-get)"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null \
	    || { echo "gemmtune: apt-get install$$missing failed"; exit 1; }; \
	fi

probe:
	@echo "CUDA:    $(CUDA) ($$($(CUDA)/bin/nvcc --version 2>/dev/null | tail -1))"
	@echo "sqlite3: $$([ -f /usr/include/sqlite3.h ] && echo found || echo missing)"
	@echo "cJSON:   $$([ -f /usr/include/cjson/cJSON.h ] && echo found || echo missing)"
	@echo "gnuplot: $$(command -v gnuplot || echo missing)"

$(BUILD)/tools/embed: src/tools/embed.c
	@mkdir -p $(@D)
	$(CC) -O1 -o $@ $<

$(BUILD)/gen/templates.c: $(BUILD)/tools/embed $(wildcard templates/*.cu templates/*.cuh)
	@mkdir -p $(@D)
	$(BUILD)/tools/embed gt_embedded_template $(sort $(wildcard templates/*.cu templates/*.cuh)) > $@

$(BUILD)/gen/test_templates.c: $(BUILD)/tools/embed $(wildcard tests/families/*.cu)
	@mkdir -p $(@D)
	$(BUILD)/tools/embed gt_test_template $(sort $(wildcard tests/families/*.cu)) > $@

$(BUILD)/gen/schema.c: $(BUILD)/tools/embed $(wildcard db/*.sql)
	@mkdir -p $(@D)
	$(BUILD)/tools/embed gt_sql_text $(sort $(wildcard db/*.sql)) > $@

# gemmtune_winner_row's definition, cut from gemmtune.h, for the header export (db/header.c): one definition.
$(BUILD)/gen/public.c: $(BUILD)/tools/embed src/lib/gemmtune.h
	@mkdir -p $(@D)/public
	sed -n '/^#ifndef GEMMTUNE_WINNER_ROW_DEFINED/,/^#endif/p' src/lib/gemmtune.h > $(@D)/public/winner_row.h
	$(BUILD)/tools/embed gt_public_text $(@D)/public/winner_row.h > $@

$(BUILD)/gen/configs.c: $(BUILD)/tools/embed $(wildcard configs/*.conf)
	@mkdir -p $(@D)
	$(BUILD)/tools/embed gt_config_text $(sort $(wildcard configs/*.conf)) > $@

# One GT_FAMILY(name) line per `const gt_family gt_family_<name>` defined in kernels/*.c: made again when one of
# them changes, or when one is added or removed (families.list, rewritten only when the list of files differs).
$(BUILD)/gen/families.list: FORCE
	@mkdir -p $(@D)
	@echo '$(sort $(wildcard kernels/*.c))' | cmp -s - $@ || echo '$(sort $(wildcard kernels/*.c))' > $@

$(BUILD)/gen/families.inc: $(BUILD)/gen/families.list $(wildcard kernels/*.c)
	@mkdir -p $(@D)
	grep -ho '^const gt_family gt_family_[a-z0-9_]\+' kernels/*.c | sed 's/const gt_family gt_family_/GT_FAMILY(/; s/$$/)/' | sort > $@

$(BUILD)/obj/kernels/registry.o: $(BUILD)/gen/families.inc

# -DGT_VERSION comes from gemmtune.h, so the files that use it are rebuilt when it changes.
$(call obj,$(shell grep -l GT_VERSION $(KERNELS_SRC) $(DB_SRC) $(LIBSRC_SRC) $(TUNER_SRC) $(CLI_SRC) src/cli/main.c \
  $(TEST_SRC))): src/lib/gemmtune.h

$(call obj,$(KERNELS_SRC)): INC := $(INC_kernels) -I$(BUILD)/gen
$(call obj,$(DB_SRC)): INC := $(INC_db)
$(call obj,$(LIBSRC_SRC)): INC := $(INC_lib)
$(call obj,$(TUNER_SRC)): INC := $(INC_tuner)
$(call obj,$(CLI_SRC)) $(BUILD)/obj/src/cli/main.o: INC := $(INC_cli)
$(PRELOAD_OBJ): INC := $(INC_preload)
$(PRELOAD_OBJ): CFLAGS_ALL += -fvisibility=hidden
$(call obj,$(TEST_SRC)): INC := $(INC_tests)

$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(INC) $(CFLAGS_ALL) -c -o $@ $<

$(SYMVER_OBJ): $(BUILD)/obj/so/%.o: %.c | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(INC_lib) $(CFLAGS_ALL) -DGT_SHARED_SYMVER -c -o $@ $<

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -w -c -o $@ $<

$(BUILD)/libgemmtune.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The shared library uses the shared cudart, so a program linking it and -lcudart has one CUDA runtime. It exports
# gemmtune_* alone, versioned (src/lib/libgemmtune.map).
SO_OBJ := $(filter-out $(call obj,$(SYMVER_SRC)),$(LIB_OBJ)) $(SYMVER_OBJ)
$(BUILD)/libgemmtune.so: $(SO_OBJ) src/lib/libgemmtune.map
	$(CC) -shared -Wl,-soname,libgemmtune.so.$(SOVERSION) -Wl,--version-script=src/lib/libgemmtune.map -o $@ \
	  $(SO_OBJ) $(LDFLAGS_ALL) $(LIB_LIBS) -lcudart

# The drop-in: libgemmtune's objects plus src/preload, exporting only the cuBLAS entry points it serves
# (exports.map); shared cudart, so it and a program linking -lcudart have one CUDA runtime. It links no cuBLAS:
# libgemmtune refers to cuBLAS weakly and the preload finds the program's own, whatever its version.
$(BUILD)/libgemmtune_cublas.so: $(PRELOAD_OBJ) $(LIB_OBJ) src/preload/exports.map
	$(CC) -shared -Wl,-soname,libgemmtune_cublas.so -Wl,--version-script=src/preload/exports.map -o $@ \
	  $(PRELOAD_OBJ) $(LIB_OBJ) $(LDFLAGS_ALL) $(filter-out -lcublas -lcublasLt,$(LIB_LIBS)) -lcudart

# Programs of tests/preload, built in one step: their headers are listed as prerequisites instead of .d files.
PROG_CFLAGS = $(filter-out -MMD -MP,$(CFLAGS_ALL))

# The GPU check's program knows only cuBLAS and links the static CUDA runtime, as nvcc-built programs do.
$(BUILD)/check_cublas: tests/preload/check_cublas.c | deps
	$(CC) $(CPPFLAGS_ALL) $(PROG_CFLAGS) -o $@ $< $(LDFLAGS_ALL) -lcublas -lcudart_static -lpthread -ldl -lrt -lm

# Its cublasLtMatmul check knows only cuBLASLt, the same way.
$(BUILD)/check_lt: tests/preload/check_lt.c | deps
	$(CC) $(CPPFLAGS_ALL) $(PROG_CFLAGS) -o $@ $< $(LDFLAGS_ALL) -lcublasLt -lcudart_static -lpthread -ldl -lrt -lm

# Per-call cost of cuBLAS, gemmtune_sgemm and the drop-in, in one process (tests/preload/overhead.sh runs it).
# The library reaches its compiler (src/lib/compile.c) through weak references only, which take no member out of
# the static archive: -u names it, so the built-in kernel path has NVRTC (and --no-as-needed keeps libnvrtc).
$(BUILD)/preload_overhead: tests/preload/overhead.c src/lib/gemmtune.h $(BUILD)/libgemmtune.a | deps
	$(CC) $(CPPFLAGS_ALL) -Isrc/lib $(PROG_CFLAGS) -o $@ $< -Wl,-u,gt_nvrtc_compile $(BUILD)/libgemmtune.a \
	  $(LDFLAGS_ALL) -Wl,--no-as-needed $(LIB_LIBS) -lcudart

# A stand-in cuBLAS that records what reaches it, for the CPU tests of the interposer (tests/test_preload.c), and
# one of cuBLASLt (tests/test_preload_lt.c); the cuBLAS one calls cuBLASLt from inside, as the real one does.
$(BUILD)/tests/libfakecublas.so: tests/preload/fake_cublas.c tests/preload/fake_cublas_lt.c tests/preload/fake_cublas.h \
                                 tests/preload/fake_cublaslt.h | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(PROG_CFLAGS) -shared -Wl,-soname,libfakecublas.so -o $@ $(filter %.c,$^) -ldl

$(BUILD)/tests/libfakecublasLt.so: tests/preload/fake_cublaslt.c tests/preload/fake_cublaslt.h | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(PROG_CFLAGS) -shared -Wl,-soname,libfakecublasLt.so -o $@ $<

$(BUILD)/tests/drive_fake_lt: tests/preload/drive_fake_lt.c tests/preload/fake_cublaslt.h $(BUILD)/tests/libfakecublasLt.so \
                              $(BUILD)/tests/libfakecublas.so
	$(CC) $(CPPFLAGS_ALL) $(PROG_CFLAGS) -o $@ $< -L$(BUILD)/tests -lfakecublasLt -lfakecublas -Wl,-rpath,'$$ORIGIN'

# The drop-in's own cost per forwarded call, on the stand-ins (tests/preload/overhead.sh runs it on a GPU machine).
$(BUILD)/tests/preload_cost: tests/preload/cost.c tests/preload/fake_cublas.h tests/preload/fake_cublaslt.h \
                             $(BUILD)/tests/libfakecublasLt.so $(BUILD)/tests/libfakecublas.so
	$(CC) $(CPPFLAGS_ALL) $(PROG_CFLAGS) -o $@ $< -L$(BUILD)/tests -lfakecublasLt -lfakecublas -Wl,-rpath,'$$ORIGIN'

# The same without cublasGemmEx (an older or trimmed cuBLAS): preloaded in its place, by its soname.
$(BUILD)/tests/nogemmex/libfakecublas.so: tests/preload/fake_cublas.c tests/preload/fake_cublas.h | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(PROG_CFLAGS) -DFAKE_NO_GEMMEX -shared -Wl,-soname,libfakecublas.so -o $@ $<

$(BUILD)/tests/drive_fake: tests/preload/drive_fake.c tests/preload/fake_cublas.h $(BUILD)/tests/libfakecublas.so
	$(CC) $(CPPFLAGS_ALL) $(PROG_CFLAGS) -o $@ $< -L$(BUILD)/tests -lfakecublas -Wl,-rpath,'$$ORIGIN'

$(BUILD)/gemmtune: $(BUILD)/obj/src/cli/main.o $(CLI_OBJ) $(TUNER_OBJ) $(LIB_OBJ)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(LIBS)

$(BUILD)/gt_tests: $(TEST_OBJ) $(CLI_OBJ) $(TUNER_OBJ) $(LIB_OBJ) $(PRELOAD_PURE)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(LIBS)

# One candidate timed alone through gt_kernel_launch, for a study or ncu on a GPU machine (tests/perf/time_kernel.c);
# built with the rest so that it keeps building.
$(BUILD)/time_kernel: tests/perf/time_kernel.c $(LIB_OBJ) | deps
	$(CC) $(CPPFLAGS_ALL) $(INC_lib) $(PROG_CFLAGS) -o $@ $< $(LIB_OBJ) $(LDFLAGS_ALL) $(LIBS)

# A sweep replayed on recorded trials, no GPU (tests/perf/replay.c): what a strategy compiles and chooses.
$(BUILD)/replay: tests/perf/replay.c $(TUNER_OBJ) $(LIB_OBJ)
	$(CC) $(CPPFLAGS_ALL) $(INC_tuner) $(CFLAGS_ALL) -o $@ $^ $(LDFLAGS_ALL) $(LIBS)

# The CPU tests in parts run at once, one a core (tests/shards.sh; GT_SHARDS=1 runs them in one process, in order).
test: all
	tests/shards.sh $(BUILD)/gt_tests --cpu

gpu-test: all
	$(BUILD)/gt_tests --gpu

# --shard auto under a real one-node Slurm cluster (root; installs slurm-wlm and munge if absent): not in test or CI.
# SLURM_ARGS=--gpu adds the real sharded sweep, merged, against an unsharded one (tests/cluster/slurm.sh --help).
slurm-test: $(BUILD)/gemmtune
	GT_SLURM_BIN=$(abspath $(BUILD)/gemmtune) tests/cluster/slurm.sh $(SLURM_ARGS)

run: all
	$(BUILD)/gemmtune --gpu 0 --sizes $(SIZES)

# ASan/UBSan build in its own folder. CUDA's libraries need protect_shadow_gap=0 under ASan. The NVRTC compile of
# every default candidate ran in `make test`; here a spread sample of it runs (GT_SAMPLE, tests/toolkit.h), and
# the same share of the other compiling tests; the rest in full.
asan:
	$(MAKE) BUILD=build-asan SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" OPT="-O1 -g" all
	GT_SAMPLE=16 ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 LSAN_OPTIONS=suppressions=tests/lsan.supp \
	  tests/shards.sh build-asan/gt_tests --cpu

# gemmtune.pc is written at install time so it names this PREFIX: Libs for the shared library (with rpaths, as
# PREFIX and CUDA are often off the default search path), Libs.private for static links (pkg-config --static).
install: $(BUILD)/gemmtune $(BUILD)/libgemmtune.a $(BUILD)/libgemmtune.so $(BUILD)/libgemmtune_cublas.so
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(BUILD)/gemmtune $(DESTDIR)$(PREFIX)/bin/gemmtune
	install -m 644 src/lib/gemmtune.h $(DESTDIR)$(PREFIX)/include/gemmtune.h
	install -m 644 $(BUILD)/libgemmtune.a $(DESTDIR)$(PREFIX)/lib/libgemmtune.a
	install -m 755 $(BUILD)/libgemmtune.so $(DESTDIR)$(PREFIX)/lib/libgemmtune.so.$(VERSION)
	ln -sf libgemmtune.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libgemmtune.so.$(SOVERSION)
	ln -sf libgemmtune.so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/libgemmtune.so
	install -m 755 $(BUILD)/libgemmtune_cublas.so $(DESTDIR)$(PREFIX)/lib/libgemmtune_cublas.so
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' 'cudadir=$(CUDA)' '' \
	  'Name: gemmtune' 'Description: SGEMM through the kernel autotuned for this GPU and shape' 'Version: $(VERSION)' \
	  'Cflags: -I$${includedir} -I$${cudadir}/include' \
	  'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lgemmtune -L$${cudadir}/lib64 -Wl,-rpath,$${cudadir}/lib64 -lcudart' \
	  'Libs.private: $(LIB_LIBS)' \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gemmtune.pc

clean:
	rm -rf $(BUILD) build-asan

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

FORCE:
