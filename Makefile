# ingero-top: a live "top" for GPU workloads (eBPF + ncurses).
#   make          build build/ingero-top
#   make deps     install missing Debian packages (as root), or list them
#   make demo     deps + build + run the demo workload under ingero-top
#   make scenarios re-record the demo scenarios' shipped recordings (root)
#   make test     check-layers + deps + build + every test (root tests need root)
#   make bench    the benchmarks under tests/bench
#   make sweep    the diagnosis sweep (root, ~10 min): tests/sweep/results.md
#   make check-layers  the layer rule of src/ and tui/ (docs/architecture.md)
#   make mcp-client    the MCP client of the tests (npm, into tests/mcp/node_modules)

BUILD   ?= build
CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
VERSION := 0.1.0
# build jobs of make test and make demo
NPROC   ?= $(shell nproc 2>/dev/null || echo 2)

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes
CFLAGS  ?= -O2 -g
CFLAGS  += $(WARN) -std=gnu11 -D_GNU_SOURCE -DIG_VERSION='"$(VERSION)"' \
	   -fno-omit-frame-pointer -I$(BUILD) -Isrc -Ibpf
LDLIBS  := -lbpf -ldw -lelf -lz -lsqlite3 -ljansson -lncursesw -ltinfo -liberty -lm -lpthread

# Build and test dependencies, from Debian's archive.
DEPS_PKGS := gcc g++ make clang llvm pkg-config libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libjansson-dev \
	     libncurses-dev libsqlite3-dev libiberty-dev tmux sqlite3 bpftrace python3 \
	     procps util-linux locales prometheus curl libclang-rt-14-dev \
	     openssh-client openssh-server sudo

# src/ is layered (docs/architecture.md, make check-layers): core, collect,
# store, model, stacks, detect, analysis, session, report, serve, fleet; tui/ beside report;
# app on top.
LAYERS   := core collect store model stacks detect analysis session report serve fleet app
SRC      := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
HDRS     := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.h))
TUI_SRC  := $(wildcard tui/*.c)
CORE_OBJ := $(patsubst src/%.c,$(BUILD)/obj/src/%.o,$(filter-out src/app/%,$(SRC)))
APP_OBJ  := $(patsubst src/%.c,$(BUILD)/obj/src/%.o,$(filter src/app/%,$(SRC)))
TUI_OBJ  := $(patsubst tui/%.c,$(BUILD)/obj/tui/%.o,$(TUI_SRC))
TESTLIB_SRC := $(wildcard tests/lib/*.c)
TESTLIB  := $(BUILD)/tests/libtest.a
BPF_SRC  := $(wildcard bpf/*.bpf.c)
BPF_OBJ  := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRC))
SKELS    := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRC))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRC))
BENCH_SRC := $(wildcard tests/bench/bench_*.c)
BENCH_BIN := $(patsubst tests/bench/%.c,$(BUILD)/tests/bench/%,$(BENCH_SRC))
CORE_LIB := $(BUILD)/libingero.a

SHIM_DIR := $(BUILD)/shim
SHIM     := $(SHIM_DIR)/libcuda.so.1 $(SHIM_DIR)/libcudart.so.12 $(SHIM_DIR)/libnccl.so.2 \
	    $(SHIM_DIR)/libnvidia-ml.so.1 $(SHIM_DIR)/libamdhip64.so.6 $(SHIM_DIR)/libamdhip64.so.5 \
	    $(SHIM_DIR)/nvml-read $(SHIM_DIR)/ext-check
SHIM_HDRS := $(wildcard tests/shim/*.h)
WORKLOAD := $(BUILD)/workload
TEST_PROGS_SRC := $(wildcard tests/progs/*.c)
TEST_PROGS := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(TEST_PROGS_SRC))
TEST_PROGS_CXX_SRC := $(wildcard tests/progs/*.cpp)
TEST_PROGS += $(patsubst tests/progs/%.cpp,$(BUILD)/tests/progs/%,$(TEST_PROGS_CXX_SRC))
CXX     ?= g++
CXXFLAGS ?= -O2 -g
CXXFLAGS += -Wall -Wextra -Werror -fno-omit-frame-pointer
TEST_TOOLS_SRC := $(filter-out %.bpf.c,$(wildcard tests/tools/*.c))
TEST_TOOLS_BPF := $(wildcard tests/tools/*.bpf.c)
TEST_TOOLS_SKELS := $(patsubst tests/tools/%.bpf.c,$(BUILD)/tests/tools/%.skel.h,$(TEST_TOOLS_BPF))
TEST_TOOLS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TEST_TOOLS_SRC))

.PHONY: all deps demo test test-build bench clean install format check-layers check-sizes fuzz
.DEFAULT_GOAL := all

all: $(BUILD)/ingero-top

deps:
	@missing=""; for p in $(DEPS_PKGS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all build and test packages are installed"; exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "deps: missing Debian packages:$$missing"; \
	  echo "deps: run 'sudo make deps' or 'sudo apt-get install$$missing'"; exit 1; fi; \
	echo "deps: installing$$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing

# --- BPF -------------------------------------------------------------------
$(BUILD)/vmlinux.h: | $(BUILD)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c bpf/*.h $(BUILD)/vmlinux.h | $(BUILD)
	$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) \
		-I$(BUILD) -Ibpf -c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# Kept after the build (make deletes intermediates), or every make would
# regenerate the skeleton and so rebuild every object.
.SECONDARY: $(BPF_OBJ) $(SKELS) $(TEST_TOOLS_SKELS) $(TEST_TOOLS_SKELS:.skel.h=.bpf.o)

# --- user space --------------------------------------------------------------
$(BUILD)/obj/src/%.o: src/%.c $(HDRS) bpf/ingero.h $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# app/ sits on top of everything, the viewer included: "tui/tui.h".
$(BUILD)/obj/src/app/%.o: CFLAGS += -I.

$(BUILD)/obj/tui/%.o: tui/%.c $(HDRS) $(wildcard tui/*.h) | $(BUILD)/obj/tui
	$(CC) $(CFLAGS) -Itui -c $< -o $@

$(BUILD)/obj/tests/lib/%.o: tests/lib/%.c $(HDRS) $(wildcard tests/lib/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/lib -c $< -o $@

$(TESTLIB): $(patsubst tests/lib/%.c,$(BUILD)/obj/tests/lib/%.o,$(TESTLIB_SRC))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(CORE_LIB): $(CORE_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/ingero-top: $(APP_OBJ) $(TUI_OBJ) $(CORE_LIB)
	$(CC) $(CFLAGS) -o $@ $(APP_OBJ) $(TUI_OBJ) $(CORE_LIB) $(LDLIBS)

# --- tests: shim CUDA stack, workload, unit tests ---------------------------
# Shim libraries (docs/shim.md): simgpu.c is the simulated device, linked
# into each library that owns one; stats.c the SHIM_STATS counters.
$(SHIM_DIR)/libcuda.so.1: tests/shim/cuda.c tests/shim/simgpu.c tests/shim/simmem.c tests/shim/stats.c $(SHIM_HDRS) | $(SHIM_DIR)
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 -o $@ $(filter %.c,$^) -lpthread -lm
	ln -sf libcuda.so.1 $(SHIM_DIR)/libcuda.so

$(SHIM_DIR)/libcudart.so.12: tests/shim/cudart.c tests/shim/stats.c $(SHIM_HDRS) $(SHIM_DIR)/libcuda.so.1
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libcudart.so.12 -o $@ $(filter %.c,$^) \
		-L$(SHIM_DIR) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' -lpthread -lm
	ln -sf libcudart.so.12 $(SHIM_DIR)/libcudart.so

$(SHIM_DIR)/libnccl.so.2: tests/shim/nccl.c tests/shim/stats.c $(SHIM_HDRS) $(SHIM_DIR)/libcuda.so.1
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libnccl.so.2 -o $@ $(filter %.c,$^) \
		-L$(SHIM_DIR) -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' -lpthread -lm
	ln -sf libnccl.so.2 $(SHIM_DIR)/libnccl.so

$(SHIM_DIR)/libnvidia-ml.so.1: tests/shim/nvml.c tests/shim/stats.c $(SHIM_HDRS) | $(SHIM_DIR)
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $(filter %.c,$^) -lpthread
	ln -sf libnvidia-ml.so.1 $(SHIM_DIR)/libnvidia-ml.so

# libamdhip64: the same source under both sonames, with ROCm's symbol versions.
$(SHIM_DIR)/libamdhip64.so.%: tests/shim/hip.c tests/shim/simgpu.c tests/shim/simmem.c tests/shim/stats.c tests/shim/hip.map $(SHIM_HDRS) | $(SHIM_DIR)
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libamdhip64.so.$* -Wl,--version-script,tests/shim/hip.map \
		-o $@ $(filter %.c,$^) -lpthread -lm
	ln -sf libamdhip64.so.6 $(SHIM_DIR)/libamdhip64.so

$(SHIM_DIR)/nvml-read: tests/shim/nvml_read.c $(SHIM_HDRS) | $(SHIM_DIR)
	$(CC) $(CFLAGS) -o $@ $< -ldl -lpthread

$(SHIM_DIR)/ext-check: tests/shim/ext_check.c $(SHIM_HDRS) $(SHIM_DIR)/libcudart.so.12
	$(CC) $(CFLAGS) -o $@ $< -L$(SHIM_DIR) -l:libcudart.so.12 -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN' -lpthread

WORKLOAD_SRC := $(wildcard tests/workload/*.c)
$(WORKLOAD): $(WORKLOAD_SRC) $(wildcard tests/workload/*.h) $(SHIM_HDRS) $(SHIM)
	$(CC) $(CFLAGS) -Itests/shim -o $@ $(WORKLOAD_SRC) -L$(SHIM_DIR) -l:libcudart.so.12 \
		-l:libnccl.so.2 -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/shim' -ldl -lpthread -lm

# causegen: its mechanisms and helpers under tests/progs/causegen/
CAUSEGEN_SRC := $(wildcard tests/progs/causegen/*.c)
$(BUILD)/tests/progs/causegen: tests/progs/causegen.c $(CAUSEGEN_SRC) tests/progs/causegen/cg.h $(SHIM) | $(BUILD)/tests/progs
	$(CC) $(CFLAGS) -Itests/shim -Itests/progs -o $@ $< $(CAUSEGEN_SRC) -L$(SHIM_DIR) \
		-l:libcudart.so.12 -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/../../shim' -lpthread -lm

$(BUILD)/tests/progs/%: tests/progs/%.c $(SHIM) | $(BUILD)/tests/progs
	$(CC) $(CFLAGS) -Itests/shim -o $@ $< -L$(SHIM_DIR) -l:libcudart.so.12 -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN/../../shim' -lpthread -lm

$(BUILD)/tests/progs/%: tests/progs/%.cpp $(SHIM) | $(BUILD)/tests/progs
	$(CXX) $(CXXFLAGS) -Itests/shim -o $@ $< -L$(SHIM_DIR) -l:libcudart.so.12 -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN/../../shim' -lpthread -lm

$(BUILD)/tests/tools/%.bpf.o: tests/tools/%.bpf.c $(BUILD)/vmlinux.h | $(BUILD)/tests/tools
	$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD) -c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true

$(BUILD)/tests/tools/%.skel.h: $(BUILD)/tests/tools/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/tools/%: tests/tools/%.c $(CORE_LIB) $(TESTLIB) $(TEST_TOOLS_SKELS) | $(BUILD)/tests/tools
	$(CC) $(CFLAGS) -Itests/lib -I$(BUILD)/tests/tools -o $@ $< $(TESTLIB) $(CORE_LIB) $(LDLIBS)

# (the viewer's unit tests include tui/*.c: they follow its changes too)
$(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/check.h $(CORE_LIB) $(TESTLIB) $(wildcard tui/*.c tui/*.h) | $(BUILD)/tests/unit
	$(CC) $(CFLAGS) -Itests/lib -o $@ $< $(TESTLIB) $(CORE_LIB) $(LDLIBS)

$(BUILD)/tests/bench/%: tests/bench/%.c $(CORE_LIB) $(TESTLIB) | $(BUILD)/tests/bench
	$(CC) $(CFLAGS) -Itests/lib -o $@ $< $(TESTLIB) $(CORE_LIB) $(LDLIBS)

# --- the real-GPU check (tests/gpu/README.md, docs/gpu.md) ----------------------
# One file to copy to a host (README.md, "Copy to a host"): every library but
# the C library linked in, the BPF programs inside as always, debug info off.
PORTABLE_LIBS := -Wl,-Bstatic -lbpf -ldw -lelf -lz -llzma -lbz2 -lsqlite3 -ljansson \
		 -lncursesw -ltinfo -liberty -Wl,-Bdynamic -lm -lpthread -ldl
$(BUILD)/portable/ingero-top: $(APP_OBJ) $(TUI_OBJ) $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@.tmp $(APP_OBJ) $(TUI_OBJ) $(CORE_LIB) $(PORTABLE_LIBS)
	objcopy --strip-debug $@.tmp $@ && rm -f $@.tmp

.PHONY: portable gpu-bundle
portable: $(BUILD)/portable/ingero-top
	@ldd $< | awk '{print "  needs " $$1}'
	@echo "portable: $< ($$(du -k $< | cut -f1) KiB)"

# The CUDA workload on the shim (CI) and, where nvcc is, on a real GPU: the
# bundle the device check carries (portable ingero-top, the workload, the
# CUDA runtime it was linked with).
GPU_WL_SHIM := $(BUILD)/tests/gpu/gpu_workload_shim
NVCC ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
CUDA_LIB := $(dir $(NVCC))../lib64
$(GPU_WL_SHIM): tests/gpu/gpu_workload.cu $(SHIM_HDRS) $(SHIM_DIR)/libcudart.so.12
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -x c++ -Itests/shim -o $@ $< -L$(SHIM_DIR) -l:libcudart.so.12 \
		-l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/../../shim' -lpthread
$(BUILD)/gpu-bundle/gpu_workload: tests/gpu/gpu_workload.cu
	@mkdir -p $(@D)
	$(NVCC) -O2 -std=c++17 -cudart shared -gencode arch=compute_90,code=sm_90 \
		-gencode arch=compute_90,code=compute_90 -Xcompiler -fno-omit-frame-pointer \
		-Xlinker -rpath,'$$ORIGIN' -o $@ $<
	cp -L $(CUDA_LIB)/libcudart.so.13 $(@D)/
gpu-bundle: $(BUILD)/portable/ingero-top $(BUILD)/gpu-bundle/gpu_workload
	cp $(BUILD)/portable/ingero-top $(BUILD)/gpu-bundle/
	@du -sh $(BUILD)/gpu-bundle

test-build: all $(SHIM) $(WORKLOAD) $(UNIT_BIN) $(BENCH_BIN) $(TEST_PROGS) $(TEST_TOOLS) \
	    $(GPU_WL_SHIM) $(BUILD)/portable/ingero-top

# --- fuzzing: clang's libFuzzer over the replay reader and the recording
# opener, everything it reaches built with ASan and UBSan (tests/fuzz/README.md)
FUZZ_CFLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	       -fno-omit-frame-pointer -Wall -Werror -Wno-unused-parameter -std=gnu11 \
	       -D_GNU_SOURCE -DIG_VERSION='"fuzz"' -Isrc -Ibpf
FUZZ_SRC := $(wildcard src/core/*.c src/store/*.c src/model/*.c src/detect/*.c)
FUZZ_OBJ := $(patsubst src/%.c,$(BUILD)/fuzz/obj/%.o,$(FUZZ_SRC))

$(BUILD)/fuzz/obj/%.o: src/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD)/fuzz/fuzz_replay: tests/fuzz/fuzz_replay.c $(FUZZ_OBJ)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) \
		-lsqlite3 -ljansson -lbpf -lm -lpthread

fuzz: $(BUILD)/fuzz/fuzz_replay

# Fails when a file includes a header from a layer above its own
# (docs/architecture.md has the table).
check-layers:
	@tests/tools/check_layers.py

# Fails when a file or a function is longer than docs/architecture.md allows.
check-sizes:
	@python3 tests/tools/check_sizes.py

# Fails when a layer's objects call a layer they may not (each layer linked
# alone with those below it: tests/tools/check_links.sh).
check-links: all
	@LDLIBS="$(LDLIBS)" tests/tools/check_links.sh $(BUILD)

test: check-layers check-sizes
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory -j$(NPROC) test-build
	@$(MAKE) --no-print-directory check-links
	@$(MAKE) --no-print-directory mcp-client
	@tests/run.sh

# The official MCP SDK at the version pinned in tests/mcp/package.json, for
# tests/integration/test_mcp.sh (which skips when it cannot be installed).
.PHONY: mcp-client check-links
mcp-client:
	@tests/mcp/install.sh

demo:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory -j$(NPROC) test-build
	@tests/demo.sh

# Re-records the demo scenarios' shipped recordings, tests/scenarios/*.db (as
# root; SCENARIOS="cpu-contention ..." for some only). docs/scenarios.md.
.PHONY: scenarios
scenarios:
	@$(MAKE) --no-print-directory test-build
	@tests/scenarios/record.sh $(SCENARIOS)

bench:
	@$(MAKE) --no-print-directory test-build
	@tests/bench/run.sh

# Every generated case traced, recorded, replayed and judged against the
# workload's own ground truth (tests/sweep/README.md; root); writes the
# confusion matrix and impact errors. SWEEP_ARGS="--cases REGEX" for some.
.PHONY: sweep
sweep:
	@$(MAKE) --no-print-directory test-build
	@tests/sweep/sweep.py --out tests/sweep/results.md $(SWEEP_ARGS)

# The binary, and what --demo runs (src/session/demo.c finds it beside the
# binary in the build tree, or in PREFIX/libexec/ingero-top installed): the
# workload, its helper programs and the shim libraries they load (rpath
# $ORIGIN), with the scenarios' recordings in PREFIX/share/ingero-top.
PREFIX ?= /usr/local
DEMO_PROGS := $(BUILD)/tests/progs/hog $(BUILD)/tests/progs/trainer $(BUILD)/tests/progs/dataloader
install: all $(WORKLOAD) $(DEMO_PROGS) $(SHIM)
	install -D -m 0755 $(BUILD)/ingero-top $(DESTDIR)$(PREFIX)/bin/ingero-top
	install -D -m 0755 $(WORKLOAD) $(DESTDIR)$(PREFIX)/libexec/ingero-top/workload
	install -d $(DESTDIR)$(PREFIX)/libexec/ingero-top/tests/progs $(DESTDIR)$(PREFIX)/libexec/ingero-top/shim
	install -m 0755 $(DEMO_PROGS) $(DESTDIR)$(PREFIX)/libexec/ingero-top/tests/progs/
	install -m 0755 $(filter %.so.1 %.so.2 %.so.12 %.so.5 %.so.6,$(SHIM)) \
		$(DESTDIR)$(PREFIX)/libexec/ingero-top/shim/
	install -d $(DESTDIR)$(PREFIX)/share/ingero-top/scenarios
	install -m 0644 tests/scenarios/*.db $(DESTDIR)$(PREFIX)/share/ingero-top/scenarios/

# record-service: the always-on recorder (docs/recording.md): the binary and
# its systemd unit, installed, not started (record-service)
.PHONY: install-service
install-service: install
	install -D -m 0644 docs/ingero-top-record.service \
		$(DESTDIR)/etc/systemd/system/ingero-top-record.service
	@echo "installed (record-service); to start it: systemctl daemon-reload &&" \
		"systemctl enable --now ingero-top-record"

format:
	clang-format -i src/*/*.[ch] tui/*.[ch] bpf/*.[ch] tests/unit/*.[ch] tests/lib/*.[ch]

$(BUILD) $(BUILD)/obj/tui $(SHIM_DIR) $(BUILD)/tests/unit $(BUILD)/tests/bench $(BUILD)/tests/progs $(BUILD)/tests/tools:
	mkdir -p $@

clean:
	rm -rf $(BUILD)
