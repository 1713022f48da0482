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
  [pdftotext]=poppler-utils
  [pdfinfo]=poppler-utils
  [zbarimg]=zbar-tools
  [cupsd]=cups
  [lp]=cups-client
  [lpadmin]=cups-client
  [ippeveprinter]=cups-ipp-utils
  [ipptool]=cups-ipp-utils
  [avahi-daemon]=avahi-daemon
  [dbus-daemon]=dbus
  [chromium]=chromium
  [php]=php-cli
  [strace]=strace
  [node]=nodejs
  [javac]=default-jdk-headless
  [mcs]=mono-mcs
  [npm]=nodejs
  [wine]=wine
  [wixl]=wixl
  [msiinfo]=msitools
  [lintian]=lintian
  [x86_64-w64-mingw32-gcc]=gcc-mingw-w64-x86-64
)
# Debian packages that provide no command of their own (PHP extensions and
# libraries for the vendor SDK and the ESC/POS decoder, the .xlsx reader, the
# JSON Schema validator of the OpenAPI examples, Wine's 64-bit loader).
libs=(php-curl php-mbstring php-intl php-imagick php-guzzlehttp-guzzle php-guzzlehttp-psr7 python3-openpyxl python3-jsonschema wine64)
missing=()
for cmd in "${!need[@]}"; do
  if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$cmd" ]; then
    missing+=("${need[$cmd]}")
  fi
done
if command -v dpkg-query >/dev/null 2>&1; then
  for pkg in "${libs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$pkg")
    fi
  done
fi
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)

if ! command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: missing tools (${missing[*]}) and no apt-get here; install them by hand" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "test-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
