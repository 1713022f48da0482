# Developer commands. `make test` is the one CI runs (see README.md).
GO      ?= go
LINT    := $(GO) tool -modfile=tools/go.mod golangci-lint
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: run test test-windows test-short fuzz bench bench-scale bench-latency fmt vet lint build cross clean

run:            ## run the agent on the embedded default profile
	$(GO) run ./cmd/cfe-agent

test:           ## install missing test tools, then run every test with the race detector
	./scripts/test-deps.sh
	$(GO) test -race -count=1 ./...

test-windows:   ## the Windows unit tests and cfe-agent.exe under Wine, the slow Windows tests included
	CFE_WINE_FULL=1 $(GO) test -count=1 -v -timeout 20m -run '^TestWine_' ./internal/wintest/

test-short:     ## quick tests, no tool install, no race detector
	$(GO) test -short ./...

fuzz:           ## each fuzz target briefly (FUZZTIME seconds each), then the issuer property test at length (PROPERTY_N requests) and the power-cut replay (POWERCUT_N states)
	./scripts/fuzz.sh $(or $(FUZZTIME),10)

bench:          ## benchmarks (numbers go to BENCHMARKS.md)
	$(GO) test -run '^$$' -bench . -benchmem ./...

bench-scale:    ## fill stores of 1 M and 3 M CFEs and measure them (about 15 GB of disk at 3 M; BENCHMARKS.md)
	CFE_SCALE_N=$(or $(SCALE_N),1000000,3000000) nice -n 19 ionice -c3 $(GO) test -run '^TestScale$$' -v -count=1 -timeout 0 ./internal/scalefill/

bench-latency:  ## the latency of one sale: floor, POST /sign-cfe at 10 and 50 req/s (open loop), sale to printer
	./scripts/bench-latency.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

lint:           ## golangci-lint, pinned in tools/go.mod
	$(LINT) run ./...

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ ./cmd/...

cross:          ## cross-compile the agent and the sandbox for the three desktop platforms
	@for p in linux/amd64 windows/amd64 darwin/arm64; do \
	  os=$${p%/*}; arch=$${p#*/}; ext=""; [ $$os = windows ] && ext=.exe; \
	  for c in cfe-agent cfe-sandbox; do \
	    echo "build $$c $$os/$$arch"; \
	    CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' \
	      -o dist/$$os-$$arch/$$c$$ext ./cmd/$$c || exit 1; \
	  done; \
	done

clean:
	rm -rf bin dist
