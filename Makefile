# rocmk: `make demo` runs the main job, `make test` runs the tests.
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)
GO      ?= go
BIN     := bin/rocmk
DEMO    := out/demo
ARCHS   ?= gfx90a,gfx908,gfx1030
FUZZTIME ?= 15s
GOFLAGS_TEST ?= -timeout 30m

.PHONY: all setup build demo test unit race fuzz sysroot-test bench vet fmt golden clean

all: build

setup:
	@bash scripts/install-toolchain.sh

build:
	$(GO) build -o $(BIN) .

# The main job: toolchain check, hipify the bundled CUDA sample, build the
# bundled HIP kernels for several targets through the cache, list the cache,
# inspect what was built.
demo: setup build
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	@echo '$$ rocmk doctor' && ./$(BIN) doctor || true
	@echo '$$ rocmk targets --buildable' && ./$(BIN) targets --buildable
	@echo '$$ rocmk hipify --sample -o $(DEMO)/hip' && ./$(BIN) hipify --sample -o $(DEMO)/hip --stats
	@echo '$$ rocmk build --arch $(ARCHS) -o $(DEMO)/build --bundle' && ./$(BIN) build --arch $(ARCHS) -o $(DEMO)/build --bundle
	@echo '$$ rocmk cache ls' && ./$(BIN) cache ls
	@echo '$$ rocmk inspect $(DEMO)/build/*.hsaco' && ./$(BIN) inspect $(DEMO)/build/*.hsaco
	@echo '$$ rocmk verify' && { ./$(BIN) verify; rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 4 ] || exit $$rc; }

# The tests: installs the toolchain the real-compile tests use, then vet,
# unit and integration tests, the race detector on the packages with
# concurrency, each fuzz target for $(FUZZTIME), then the toolchain tests
# again in the second ROCm lane. (go test -short ./... is the hermetic lane:
# no real compiler, process tree or server.)
test: setup vet unit race fuzz sysroot-test

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...

unit:
	$(GO) test $(GOFLAGS_TEST) ./...

# The race detector on the builder's worker pool and cache interplay, the
# cache's concurrent processes, verify's pipelined runs and hipify's tree mode.
race:
	$(GO) test $(GOFLAGS_TEST) -race ./cache/... ./compile/ ./verify/...
	$(GO) test $(GOFLAGS_TEST) -race -run 'Tree' ./hipify/

# The second ROCm lane: Debian unstable's ROCm (hipcc 7, HIP 6.4, clang 21)
# in a sysroot that scripts/rocm-sysroot.sh makes from Debian packages
# (about 6 minutes and 7 GB the first time; root, or sudo). The packages
# whose tests run the real toolchain run there again; the first lane is
# Debian 12's ROCm 5.2.3 on the host.
SYSROOT_PKGS ?= ./compile/... ./commands/ ./kernels/ ./hipify/ ./inspect/ ./verify/...
sysroot-test:
	bash scripts/rocm-sysroot.sh
	bash scripts/rocm-sysroot.sh run -- go test $(GOFLAGS_TEST) $(SYSROOT_PKGS)
	# verify/gpu's hipRTC tests dlopen libhiprtc 6.4: cgo, with the sysroot's clang as the C compiler.
	bash scripts/rocm-sysroot.sh run -- env CGO_ENABLED=1 CC=clang-21 go test $(GOFLAGS_TEST) ./verify/gpu/

# Every Fuzz* function, one at a time, for a bounded time each.
fuzz:
	GO="$(GO)" FUZZTIME="$(FUZZTIME)" bash scripts/fuzz.sh

# Go benchmarks, then a fully cached rebuild of the bundled suite for two
# targets, the whole process (target: under 100 ms; docs/build.md).
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...
	python3 scripts/bench-cached-rebuild.py 20 $(BIN)

golden:
	$(GO) test ./commands/ ./hipify/ ./inspect/ ./compile/ -update

clean:
	rm -rf bin out
