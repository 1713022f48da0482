# Developer commands. `make ci` is exactly what CI runs (.ci/run: packages, then make ci; see README.md).
GO      ?= go
LINT    := $(GO) tool -modfile=tools/go.mod golangci-lint
VERSION ?= $(shell ./scripts/version.sh VERSION 2>/dev/null || echo dev)
# The numeric a.b.c form (MSI ProductVersion, the exe's FileVersion resource).
NUMERIC_VERSION ?= $(shell ./scripts/version.sh MSI_VERSION 2>/dev/null || echo 0.0.0)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
BUILD_DATE ?= $(shell date -u $${SOURCE_DATE_EPOCH:+-d @$$SOURCE_DATE_EPOCH} +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.buildDate=$(BUILD_DATE)
# The Windows agent is a GUI-subsystem program (no console window; see
# internal/console) with its resources (icon, version,
# manifest) from WINRES_SYSO, which the winres target generates.
WINDOWS_LDFLAGS := $(LDFLAGS) -H=windowsgui
WINRES      := $(GO) tool -modfile=tools/go.mod go-winres
WINRES_SYSO := cmd/cfe-agent/rsrc_windows_amd64.syso

.PHONY: run ci test test-windows test-short fuzz bench bench-scale bench-latency fmt vet lint build cross dist clean winres windows

run:            ## run the agent on the embedded default profile
	$(GO) run ./cmd/cfe-agent

ci: export CFE_STRICT_TOOLS := 1
ci: export CFE_DIST_DIR := $(CURDIR)/dist
ci:             ## exactly what CI runs once its packages are installed (.ci/run): vet, lint, cross-builds, packages, a short fuzz, then make test; a missing test tool fails (CFE_STRICT_TOOLS=1)
	$(GO) version
	@echo "== test tools (a fresh machine gets its missing Debian packages; on CI .ci/run has installed them)"
	./scripts/test-deps.sh
	@echo "== vet"
	$(GO) vet ./...
	@echo "== lint"
	$(MAKE) lint
	@echo "== cross-compile"
	$(MAKE) cross
	@echo "== dist (raw binaries, MSI, .deb, SHA256SUMS; packaging/'s tests check them)"
	$(MAKE) dist
	@echo "== fuzz (short; the issuer property test runs with its fixed seed in make test)"
	PROPERTY_N=0 $(MAKE) fuzz FUZZTIME=8
	@echo "== tests (as make test: every test with the race detector)"
	$(GO) test -race -count=1 ./...

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

bench-latency:  ## the latency of one sale: floor, POST /sign-cfe at 10 and 50 req/s (open loop), flushes per sale (strace), sale to printer
	./scripts/bench-latency.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

lint:           ## golangci-lint, pinned in tools/go.mod
	$(LINT) run ./...

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ ./cmd/...

winres:         ## the Windows resources of cfe-agent.exe (icon, version from VERSION, manifest) as a .syso
	$(WINRES) make --in cmd/cfe-agent/winres/winres.json --out cmd/cfe-agent/rsrc --arch amd64 \
	  --product-version '$(VERSION)' --file-version '$(NUMERIC_VERSION)'

windows: winres ## only the Windows agent (WINDOWS_EXE, default dist/windows-amd64/cfe-agent.exe)
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build -trimpath -ldflags '$(WINDOWS_LDFLAGS)' \
	  -o $(or $(WINDOWS_EXE),dist/windows-amd64/cfe-agent.exe) ./cmd/cfe-agent

cross: winres   ## cross-compile the agent and the sandbox for the three desktop platforms
	@for p in linux/amd64 windows/amd64 darwin/arm64; do \
	  os=$${p%/*}; arch=$${p#*/}; ext=""; [ $$os = windows ] && ext=.exe; \
	  for c in cfe-agent cfe-sandbox; do \
	    echo "build $$c $$os/$$arch"; ldflags='$(LDFLAGS)'; \
	    [ $$os/$$c = windows/cfe-agent ] && ldflags='$(WINDOWS_LDFLAGS)'; \
	    CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "$$ldflags" \
	      -o dist/$$os-$$arch/$$c$$ext ./cmd/$$c || exit 1; \
	  done; \
	done

dist: winres    ## raw binaries, MSI, .deb and SHA256SUMS into dist/, versioned from git tags (scripts/dist.sh)
	GO='$(GO)' LDFLAGS='$(LDFLAGS)' WINDOWS_LDFLAGS='$(WINDOWS_LDFLAGS)' ./scripts/dist.sh

clean:
	rm -rf bin dist $(WINRES_SYSO)
