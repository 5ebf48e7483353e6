# podline — `make run` and `make test` are the two commands a fresh machine
# needs; everything they depend on is installed by scripts/ and cached
# outside the repository (/var/cache/podline).

GO        ?= go
# Go 1.27.3, which the go command fetches from the module proxy on first
# use: the Go 1.26.8 this machine starts with has standard-library
# vulnerabilities podline's code reaches (net/http, crypto/x509 and more:
# govulncheck in lint), and a race in the fuzzing coordinator that fails a
# short -fuzztime run on a busy machine (go.dev/issue/75804).
export GOTOOLCHAIN ?= go1.27.3
BIN       := bin/podline
GOFILES    = $(shell git ls-files --cached --others --exclude-standard '*.go')
# Benchmarks compare the lock-free queue with a buffered channel.
BENCH_CPU ?= 1,2,4,8

.PHONY: all build run stop cluster cluster-down test prebuild test-unit test-fuzz fuzz test-e2e bench bench-quick bench-micro bench-micro-quick bench-eventplane bench-eventplane-quick lint generate check-generate reliability test-vm test-vm-all runtime-up runtime-down clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/podline

# run: containerd + runc (built and cached on first use), then podline with
# the pods in examples/; prints where to look.
run: build runtime-up
	scripts/agent.sh start

# cluster: containerd, a one-node control plane (built and cached on first
# use) and podline as its node; prints the kubectl command that works.
cluster: build
	scripts/cluster.sh up

cluster-down:
	scripts/cluster.sh down

# stop: podline, every pod, containerd; no mounts or processes left.
stop:
	scripts/agent.sh stop
	scripts/runtime.sh down
	scripts/agent.sh cleanup

# test: everything. prebuild starts the e2e components' builds in the
# background first (scripts/prebuild.sh), so that a fresh machine builds
# them while vet and the unit tests leave CPU idle.
test: prebuild lint check-generate test-unit test-fuzz test-e2e bench-quick

prebuild:
	scripts/prebuild.sh

lint:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/
	scripts/vulncheck.sh

# generate: rebuild the committed BPF objects (needs clang: scripts/install-bpf-tools.sh).
generate:
	scripts/install-bpf-tools.sh
	$(GO) generate ./ebpf/

# check-generate: when clang is installed, the committed BPF objects must be
# what the sources produce.
check-generate:
	@if command -v clang >/dev/null; then \
		$(GO) generate ./ebpf/ && git diff --exit-code -- ebpf/ && echo "BPF objects match their sources"; \
	else echo "clang not installed: BPF objects not regenerated (make generate installs it)"; fi

# Unit tests: no runtime, no root-only kernel features beyond mounts.
test-unit:
	$(GO) test -race -count=1 ./...
	cd bench && $(GO) test -race -count=1 ./...

# Fuzzing: every func FuzzXxx in the module (scripts/fuzz.sh finds them),
# one after the other. test-fuzz runs each for a few seconds on top of its
# committed seeds; fuzz runs each for long and prints executions per target.
# A crash leaves its input in the package's testdata/fuzz/FuzzXxx/.
FUZZTIME       ?= 5m
FUZZTIME_QUICK ?= 3s

test-fuzz:
	scripts/fuzz.sh $(FUZZTIME_QUICK)

fuzz:
	scripts/fuzz.sh $(FUZZTIME)

# End-to-end: the podline binary against the real containerd + runc, an
# image registry on loopback and, for the cluster tests, a real etcd +
# kube-apiserver + scheduler + controller-manager (each started for the
# tests and stopped after, unless it already ran). scripts/e2e.sh runs the
# TestCluster* tests last, so that the others do not wait for the control
# plane's build on a fresh machine.
test-e2e:
	GO=$(GO) scripts/with-runtime.sh scripts/with-registry.sh scripts/e2e.sh

# bench: the suite in bench/: density (100/1,000/10,000 pods), idle, churn,
# real containerd, the --queue/--pleg ablations and the upstream kubelet side
# by side (built once by scripts/install-kube.sh); results, summary and plots
# in bench/results/<date>-<host>/ (~20 min, as root).
bench:
	cd bench && ../scripts/with-runtime.sh $(GO) run ./suite

# bench-quick: every scenario once at small N: a smoke run, not a
# measurement (under 2 min once the kubelet is built).
bench-quick:
	cd bench && ../scripts/with-runtime.sh $(GO) run ./suite -quick

# bench-micro: the queue against a buffered channel at each -cpu, then the
# pipeline alone against the in-process fake CRI.
bench-micro:
	$(GO) test -run '^$$' -bench 'Queue|Chan' -benchtime 200ms -cpu $(BENCH_CPU) -count 5 ./stages/
	$(GO) test -run '^$$' -bench 'PipelineStart' -benchtime 1x ./stages/

bench-micro-quick:
	$(GO) test -run '^$$' -bench 'Queue|Chan' -benchtime 1000x ./stages/
	$(GO) test -run '^$$' -bench 'PipelineStart/latency=zero/.*/pods=100$$' -benchtime 1x ./stages/

# bench-eventplane: --pleg=events against --pleg=relist on the real runtime:
# exit-detection latency and idle CPU (~5 min, as root; -quick ~1 min).
bench-eventplane:
	cd bench && ../scripts/with-runtime.sh $(GO) run ./eventplane

bench-eventplane-quick:
	cd bench && ../scripts/with-runtime.sh $(GO) run ./eventplane -quick

# The e2e fault cases at the sizes issue 15 states (`make test` runs them
# over shorter windows; e2e/fullsize_test.go).
RELIABILITY_E2E ?= Fault|ClientCertificateRotation|ChurnLeavesNoDiscrepancies

# reliability: the fault suite's first cases: on the fake CRI, kill -9 of
# podline mid-start (1,000 pods; at 25/50/90 % Running), mid-teardown and
# idle, a runtime hanging on one pod, a slow runtime; on the real
# containerd, containerd stopped and killed -9 under podline. Each case's
# invariant, figures and PASS/FAIL in
# bench/results/<date>-<host>/reliability-<rev>.md (~15 min, as root);
# exits non-zero when an invariant breaks. Then the e2e fault cases at full
# size (~10 min).
reliability:
	cd bench && ../scripts/with-runtime.sh $(GO) run ./suite -scenarios reliability
	PODLINE_E2E_FULL=1 scripts/with-runtime.sh scripts/with-registry.sh scripts/with-controlplane.sh \
		$(GO) test -tags e2e -count=1 -timeout 30m -v -run '$(RELIABILITY_E2E)' ./e2e/

# test-vm: the e2e tests that check podline on cgroup v2, in a Debian 12
# guest with systemd as PID 1 and its own containerd (scripts/vm.sh; the
# guest is built once into /var/cache/podline/vm). Under software
# emulation: ~5 min warm, ~8 min with the guest's first build.
# ISSUE 31: the systemd driver's run joins here once podline has
# --cgroup-driver: scripts/vm.sh test --driver systemd.
test-vm:
	scripts/vm.sh test --driver cgroupfs

# test-vm-all: every e2e test that needs only the runtime, in the guest.
test-vm-all:
	scripts/vm.sh test --driver cgroupfs --all

runtime-up:
	scripts/runtime.sh up

runtime-down:
	scripts/runtime.sh down

clean:
	rm -rf bin
