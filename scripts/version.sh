#!/bin/sh
# Prints the build's versions from git, one per line as NAME=value:
#   VERSION      what `cfe-agent version` says (-X main.version)
#   DEB_VERSION  the .deb's Version
#   MSI_VERSION  the MSI's ProductVersion (numeric a.b.c: a, b ≤ 255, c ≤ 65535)
# A commit tagged vX.Y.Z (the tag at HEAD) is release X.Y.Z everywhere.
# Any other commit is a pre-release, ordered below every release:
#   VERSION 0.0.0-dev.<commits>+<sha>[.dirty], DEB_VERSION 0.0.0~git<YYYYMMDD>.<commits>.<sha>,
#   MSI_VERSION 0.0.<commits> (<commits> = git rev-list --count HEAD, <YYYYMMDD> the commit's UTC date).
# With an argument (VERSION, DEB_VERSION or MSI_VERSION) it prints that value alone.
set -eu
cd "$(dirname "$0")/.."

dirty=""
if ! git diff --quiet HEAD -- 2>/dev/null; then
  dirty=".dirty"
fi
tag=$(git tag --points-at HEAD --list 'v[0-9]*' | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -n 1 || true)
if [ -n "$tag" ]; then
  v=${tag#v}
  major=${v%%.*}; rest=${v#*.}; minor=${rest%%.*}; patch=${rest#*.}
  if [ "$major" -gt 255 ] || [ "$minor" -gt 255 ] || [ "$patch" -gt 65535 ]; then
    echo "version.sh: $tag does not fit an MSI ProductVersion (major, minor ≤ 255; patch ≤ 65535)" >&2
    exit 1
  fi
  VERSION="$v"
  [ -n "$dirty" ] && VERSION="$v+dirty"
  DEB_VERSION="$v"
  MSI_VERSION="$v"
else
  count=$(git rev-list --count HEAD)
  sha=$(git rev-parse --short=7 HEAD)
  date=$(TZ=UTC git log -1 --date=format-local:%Y%m%d --format=%cd HEAD)
  if [ "$count" -gt 65535 ]; then
    echo "version.sh: $count commits do not fit an MSI ProductVersion's build field" >&2
    exit 1
  fi
  VERSION="0.0.0-dev.$count+$sha$dirty"
  DEB_VERSION="0.0.0~git$date.$count.$sha"
  MSI_VERSION="0.0.$count"
fi

case "${1:-}" in
  "") printf 'VERSION=%s\nDEB_VERSION=%s\nMSI_VERSION=%s\n' "$VERSION" "$DEB_VERSION" "$MSI_VERSION" ;;
  VERSION) echo "$VERSION" ;;
  DEB_VERSION) echo "$DEB_VERSION" ;;
  MSI_VERSION) echo "$MSI_VERSION" ;;
  *) echo "usage: $0 [VERSION|DEB_VERSION|MSI_VERSION]" >&2; exit 2 ;;
esac
