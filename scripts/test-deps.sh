#!/usr/bin/env bash
# Installs the system tools the tests use as independent verifiers, when missing.
# Debian/Ubuntu only; uses sudo when not run as root. Idempotent and quiet when
# everything is present.
set -euo pipefail

# command -> Debian package
declare -A need=(
  [xmllint]=libxml2-utils
  [xmlsec1]=xmlsec1
  [openssl]=openssl
  [ip]=iproute2
  [dbus-daemon]=dbus-daemon
  [chromium]=chromium
)
missing=()
for cmd in "${!need[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: missing tools (${missing[*]}) and no apt-get here; install them by hand" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "test-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
