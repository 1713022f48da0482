#!/usr/bin/env bash
# Benchmarks the agent as shipped: builds cfe-agent (as `make build` does) and
# cfe-load, then lets cfe-load start the agent on fresh temporary data
# directories. It times start to a healthy /health (median of -starts runs on
# fresh data directories), reads idle RSS, runs the load (default 30 s, 8
# connections), reads RSS after it, then times restarts on the data directory
# the load filled. The Markdown table goes to stdout, progress and the load
# report to stderr. Exits non-zero on any failed request or any missing or
# repeated number.
#
# Usage: scripts/bench-agent.sh [cfe-load flags, e.g. -d 10s -c 4 -starts 5]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$bin/" ./cmd/cfe-agent ./cmd/cfe-load
echo "machine: $(nproc) cores, $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH); uptime:$(uptime)" >&2
"$bin/cfe-load" -agent "$bin/cfe-agent" "$@"
