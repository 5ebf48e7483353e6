# podline — `make run` and `make test` are the two commands a fresh machine
# needs; everything they depend on is installed by scripts/ and cached
# outside the repository (/var/cache/podline).

GO        ?= go
BIN       := bin/podline
GOFILES    = $(shell git ls-files --cached --others --exclude-standard '*.go')
# Benchmarks compare the lock-free queue with a buffered channel.
BENCH_CPU ?= 1,2,4,8

.PHONY: all build run stop test test-unit test-e2e bench bench-quick bench-eventplane bench-eventplane-quick lint generate check-generate runtime-up runtime-down clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/podline

# run: containerd + runc (built and cached on first use), then podline with
# the pods in examples/; prints where to look.
run: build runtime-up
	scripts/agent.sh start

# stop: podline, every pod, containerd; no mounts or processes left.
stop:
	scripts/agent.sh stop
	scripts/runtime.sh down
	scripts/agent.sh cleanup

test: lint check-generate test-unit test-e2e

lint:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/

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

# End-to-end: the podline binary against the real containerd + runc
# (started for the tests and stopped after, unless it already ran).
test-e2e:
	scripts/with-runtime.sh $(GO) test -tags e2e -count=1 -timeout 20m -v ./e2e/

# bench: the queue against a buffered channel at each -cpu, then N pods
# through the whole pipeline against the zero-latency fake CRI.
bench:
	$(GO) test -run '^$$' -bench 'Queue|Chan' -benchtime 200ms -cpu $(BENCH_CPU) -count 5 ./stages/
	$(GO) test -run '^$$' -bench 'PipelineStart' -benchtime 3x ./stages/

# bench-quick: every benchmark once, briefly: a smoke run, not a measurement.
bench-quick:
	$(GO) test -run '^$$' -bench 'Queue|Chan' -benchtime 1000x ./stages/
	$(GO) test -run '^$$' -bench 'PipelineStart/pods=100$$' -benchtime 1x ./stages/

# bench-eventplane: --pleg=events against --pleg=relist on the real runtime:
# exit-detection latency and idle CPU (~5 min, as root; -quick ~1 min).
bench-eventplane:
	scripts/with-runtime.sh $(GO) run ./bench/eventplane

bench-eventplane-quick:
	scripts/with-runtime.sh $(GO) run ./bench/eventplane -quick

runtime-up:
	scripts/runtime.sh up

runtime-down:
	scripts/runtime.sh down

clean:
	rm -rf bin
