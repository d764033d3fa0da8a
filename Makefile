# gemmtune: `make` builds build/gemmtune, build/libgemmtune.{a,so} and the cuBLAS drop-in
# build/libgemmtune_cublas.so (with its GPU check programs); `make test` runs the CPU tests;
# `make gpu-test` the GPU tests; `make run` a sweep on GPU 0; `make asan` the CPU tests under ASan/UBSan.
# Dependencies come from the system: the CUDA toolkit (NVRTC, cuBLAS, cuBLASLt, cudart), libsqlite3-dev,
# libcjson-dev. Layers, each compiled seeing only the folders below it (docs/ARCHITECTURE.md):
#   src/cli -> tuner -> src/lib -> db -> kernels        (tests see everything)
#   src/preload -> gemmtune.h                          (a client of the public API only)

VERSION   := 0.2.0
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
# The library: the loader and what it needs (families, database, runtime), templates and schema embedded.
LIB_OBJ   := $(call obj,$(KERNELS_SRC) $(DB_SRC) $(LIBSRC_SRC)) $(BUILD)/obj/gen/templates.o $(BUILD)/obj/gen/schema.o
TUNER_OBJ := $(call obj,$(TUNER_SRC))
CLI_OBJ   := $(call obj,$(CLI_SRC)) $(BUILD)/obj/gen/configs.o
TEST_OBJ  := $(call obj,$(TEST_SRC)) $(BUILD)/obj/gen/test_templates.o
# The cuBLAS drop-in: its objects, and those of them that need no CUDA (the CPU tests link these too).
PRELOAD_OBJ  := $(call obj,$(PRELOAD_SRC))
PRELOAD_PURE := $(call obj,src/preload/config.c src/preload/decide.c src/preload/log.c)
PRELOAD_BINS := $(BUILD)/libgemmtune_cublas.so $(BUILD)/check_cublas $(BUILD)/preload_overhead \
                $(BUILD)/tests/libfakecublas.so $(BUILD)/tests/drive_fake
ALL_OBJ   := $(LIB_OBJ) $(TUNER_OBJ) $(CLI_OBJ) $(TEST_OBJ) $(BUILD)/obj/src/cli/main.o

.PHONY: all test gpu-test run asan clean install deps probe
.DEFAULT_GOAL := all

all: $(BUILD)/gemmtune $(BUILD)/libgemmtune.a $(BUILD)/libgemmtune.so $(BUILD)/gt_tests $(PRELOAD_BINS)

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

$(BUILD)/gen/configs.c: $(BUILD)/tools/embed $(wildcard configs/*.conf)
	@mkdir -p $(@D)
	$(BUILD)/tools/embed gt_config_text $(sort $(wildcard configs/*.conf)) > $@

# One GT_FAMILY(name) line per `const gt_family gt_family_<name>` defined in kernels/*.c.
$(BUILD)/gen/families.inc: $(wildcard kernels/*.c)
	@mkdir -p $(@D)
	grep -ho '^const gt_family gt_family_[a-z0-9_]\+' kernels/*.c | sed 's/const gt_family gt_family_/GT_FAMILY(/; s/$$/)/' | sort > $@

$(BUILD)/obj/kernels/registry.o: $(BUILD)/gen/families.inc

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

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -w -c -o $@ $<

$(BUILD)/libgemmtune.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The shared library uses the shared cudart, so a program linking it and -lcudart has one CUDA runtime.
$(BUILD)/libgemmtune.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libgemmtune.so.0 -o $@ $^ $(LDFLAGS_ALL) $(LIB_LIBS) -lcudart

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

# Per-call cost of the drop-in over gemmtune_sgemm, in one process (run under the preload).
$(BUILD)/preload_overhead: tests/preload/overhead.c src/lib/gemmtune.h $(BUILD)/libgemmtune.a | deps
	$(CC) $(CPPFLAGS_ALL) -Isrc/lib $(PROG_CFLAGS) -o $@ $< $(BUILD)/libgemmtune.a $(LDFLAGS_ALL) $(LIB_LIBS) -lcudart

# A stand-in cuBLAS that records what reaches it, for the CPU tests of the interposer (tests/test_preload.c).
$(BUILD)/tests/libfakecublas.so: tests/preload/fake_cublas.c tests/preload/fake_cublas.h | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(PROG_CFLAGS) -shared -Wl,-soname,libfakecublas.so -o $@ $<

$(BUILD)/tests/drive_fake: tests/preload/drive_fake.c tests/preload/fake_cublas.h $(BUILD)/tests/libfakecublas.so
	$(CC) $(CPPFLAGS_ALL) $(PROG_CFLAGS) -o $@ $< -L$(BUILD)/tests -lfakecublas -Wl,-rpath,'$$ORIGIN'

$(BUILD)/gemmtune: $(BUILD)/obj/src/cli/main.o $(CLI_OBJ) $(TUNER_OBJ) $(LIB_OBJ)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(LIBS)

$(BUILD)/gt_tests: $(TEST_OBJ) $(CLI_OBJ) $(TUNER_OBJ) $(LIB_OBJ) $(PRELOAD_PURE)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(LIBS)

test: all
	$(BUILD)/gt_tests --cpu

gpu-test: all
	$(BUILD)/gt_tests --gpu

run: all
	$(BUILD)/gemmtune --gpu 0 --sizes $(SIZES)

# ASan/UBSan build in its own folder. CUDA's libraries need protect_shadow_gap=0 under ASan. The NVRTC compile of
# every default candidate ran in `make test`; here a spread sample of it runs (GT_SAMPLE, tests/toolkit.h), and
# the same share of the other compiling tests; the rest in full.
asan:
	$(MAKE) BUILD=build-asan SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" OPT="-O1 -g" all
	GT_SAMPLE=40 ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 LSAN_OPTIONS=suppressions=tests/lsan.supp build-asan/gt_tests --cpu

# gemmtune.pc is written at install time so it names this PREFIX: Libs for the shared library (with rpaths, as
# PREFIX and CUDA are often off the default search path), Libs.private for static links (pkg-config --static).
install: $(BUILD)/libgemmtune.a $(BUILD)/libgemmtune.so $(BUILD)/libgemmtune_cublas.so
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 src/lib/gemmtune.h $(DESTDIR)$(PREFIX)/include/gemmtune.h
	install -m 644 $(BUILD)/libgemmtune.a $(DESTDIR)$(PREFIX)/lib/libgemmtune.a
	install -m 755 $(BUILD)/libgemmtune.so $(DESTDIR)$(PREFIX)/lib/libgemmtune.so.$(VERSION)
	ln -sf libgemmtune.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libgemmtune.so.0
	ln -sf libgemmtune.so.0 $(DESTDIR)$(PREFIX)/lib/libgemmtune.so
	install -m 755 $(BUILD)/libgemmtune_cublas.so $(DESTDIR)$(PREFIX)/lib/libgemmtune_cublas.so
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' 'cudadir=$(CUDA)' '' \
	  'Name: gemmtune' 'Description: SGEMM through the kernel autotuned for this GPU and shape' 'Version: $(VERSION)' \
	  'Cflags: -I$${includedir} -I$${cudadir}/include' \
	  'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lgemmtune -L$${cudadir}/lib64 -Wl,-rpath,$${cudadir}/lib64 -lcudart' \
	  'Libs.private: $(LIB_LIBS)' \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gemmtune.pc
	@if [ -f $(BUILD)/gemmtune ]; then install -d $(DESTDIR)$(PREFIX)/bin && install -m 755 $(BUILD)/gemmtune $(DESTDIR)$(PREFIX)/bin/gemmtune; fi

clean:
	rm -rf $(BUILD) build-asan

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
