#!/usr/bin/env bash
# Measures the latency of one sale (BENCHMARKS.md, "Latency of one sale"):
# builds cfe-agent (as `make build` does) and cfe-load, then
#  1. cfe-load -latency-report: starts the agent on a fresh data directory
#     under DIR (default: $HOME, the disk of the agent's own data directory,
#     where /tmp may be a tmpfs), measures the floor (RSA-2048 signature with
#     the agent's key on one core, fdatasync of a 4 KB write in the data
#     directory; back to back, and 100 ms apart as at 10 req/s) and
#     POST /sign-cfe at 10 and 50 req/s,
#     open loop over 4 connections; after each rate, the agent's flushes
#     (fsync, fdatasync…) per acknowledged sale, counted by strace -f -c
#     attached to it during an extra 10 s run at that rate, not timed
#     (-count-flushes=false not to; without strace the table says "flushes:
#     not counted (strace missing)"); and prints the Markdown table;
#  2. BenchmarkSaleToPrinter: sign + render + accepted by the printer or
#     spooler (ESC/POS over TCP; CUPS with an emulated printer, which needs
#     root), SALES sales each (default 200), p50/p99.
# Exits non-zero on any failed request or any missing or repeated number.
#
# Usage: scripts/bench-latency.sh [cfe-load flags, e.g. -d 10s -rates 10,50,100]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$bin/" ./cmd/cfe-agent ./cmd/cfe-load
echo "machine: $(nproc) cores, $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH); uptime:$(uptime)" >&2
"$bin/cfe-load" -agent "$bin/cfe-agent" -latency-report -dir "${DIR:-$HOME}" "$@"
echo
echo "uptime:$(uptime)"
go test -run '^$' -bench SaleToPrinter -benchtime "${SALES:-200}x" ./cmd/cfe-agent/
