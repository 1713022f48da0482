#!/usr/bin/env bash
# Runs every fuzz target (func FuzzXxx) of the module for a short time each.
# Usage: scripts/fuzz.sh [seconds-per-target]
set -euo pipefail
t="${1:-10}"
cd "$(dirname "$0")/.."
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r f; do
  pkg="./$(dirname "${f#./}")"
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //' | while read -r fn; do
    echo "fuzz: $pkg $fn (${t}s)"
    go test "$pkg" -run '^$' -fuzz "^${fn}\$" -fuzztime "${t}s" -fuzzminimizetime 0
  done
done
