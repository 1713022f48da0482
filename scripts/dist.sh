#!/usr/bin/env bash
# Builds the release artifacts into dist/ (make dist):
#   cfe-agent_<V>_linux_amd64, cfe-agent_<V>_windows_amd64.exe, cfe-agent_<V>_darwin_arm64
#   cfe-sandbox_<V>_<os>_<arch>[.exe]   the hosted service's emulator, for integrators
#   cfe-agent_<V>_x64.msi                Windows installer (wixl; packaging/windows)
#   cfe-agent_<DEB_V>_amd64.deb          Debian/Ubuntu package (nfpm; packaging/linux)
#   SHA256SUMS                           sha256sum -c format
# Versions come from git tags (scripts/version.sh). SumatraPDF, which the MSI
# ships beside the agent, comes from the npm package pdf-to-printer@5.8.1,
# fetched once with `npm pack` into a cache and checked against a pinned
# SHA-256.
#
# Environment: GO (go), DIST (dist), CFE_DIST_CACHE (~/.cache/cfe-agent-dist),
# LDFLAGS (the builds' -ldflags; default "-s -w -X main.version=<VERSION>"),
# WINDOWS_LDFLAGS (the Windows build's whole -ldflags, e.g. "$LDFLAGS -H=windowsgui";
# default LDFLAGS). make dist passes the Makefile's.
# Needs: go, git, npm, wixl (msitools), gzip, sha256sum.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
DIST=${DIST:-dist}
CACHE=${CFE_DIST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cfe-agent-dist}

SUMATRA_NPM=pdf-to-printer@5.8.1
SUMATRA_TGZ=pdf-to-printer-5.8.1.tgz
SUMATRA_TGZ_SHA256=eb3993417e0dd3fab7fb383af49e2e943ba9dbffb9a3cb17f79b1420e4f13dc4
SUMATRA_MEMBER=package/dist/SumatraPDF-3.4.6-32.exe

for tool in git npm wixl gzip sha256sum; do
  command -v "$tool" >/dev/null || { echo "dist: $tool is not installed" >&2; exit 1; }
done

versions=$(scripts/version.sh) # VERSION=, DEB_VERSION=, MSI_VERSION= lines; fails the build when it fails
eval "$versions"
echo "dist: version $VERSION (deb $DEB_VERSION, msi $MSI_VERSION)"

rm -rf "$DIST"
stage="$DIST/.stage"
mkdir -p "$stage/windows/SumatraPDF" "$stage/linux" "$CACHE"
DIST=$(cd "$DIST" && pwd)
stage="$DIST/.stage"

# Raw binaries.
LDFLAGS=${LDFLAGS:-"-s -w -X main.version=$VERSION"}
WINDOWS_LDFLAGS=${WINDOWS_LDFLAGS:-$LDFLAGS}
case " $LDFLAGS " in
  *" -X main.version=$VERSION "*) ;;
  *) echo "dist: LDFLAGS ($LDFLAGS) do not set main.version=$VERSION" >&2; exit 1 ;;
esac
for p in linux/amd64 windows/amd64 darwin/arm64; do
  os=${p%/*} arch=${p#*/} ext="" ldflags=$LDFLAGS
  if [ "$os" = windows ]; then ext=.exe ldflags=$WINDOWS_LDFLAGS; fi
  for c in cfe-agent cfe-sandbox; do
    echo "dist: build $c $os/$arch"
    CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath -ldflags "$ldflags" \
      -o "$DIST/${c}_${VERSION//+/_}_${os}_${arch}$ext" "./cmd/$c"
  done
done
bin() { echo "$DIST/cfe-agent_${VERSION//+/_}_$1"; }

"$GO" run ./packaging icons "$stage/icons"

# SumatraPDF, from the npm registry's pinned tarball.
tgz="$CACHE/$SUMATRA_TGZ"
if [ ! -f "$tgz" ] || ! echo "$SUMATRA_TGZ_SHA256  $tgz" | sha256sum -c --status; then
  rm -f "$tgz"
  echo "dist: npm pack $SUMATRA_NPM"
  (cd "$CACHE" && npm pack --silent "$SUMATRA_NPM" >/dev/null)
fi
if ! echo "$SUMATRA_TGZ_SHA256  $tgz" | sha256sum -c --status; then
  echo "dist: $tgz does not have the pinned SHA-256 $SUMATRA_TGZ_SHA256" >&2
  exit 1
fi
tar -xzf "$tgz" -C "$stage" "$SUMATRA_MEMBER"
mv "$stage/$SUMATRA_MEMBER" "$stage/windows/SumatraPDF/SumatraPDF.exe"
rm -rf "$stage/package"
cp /usr/share/common-licenses/GPL-3 "$stage/windows/SumatraPDF/COPYING.txt"
cat > "$stage/windows/SumatraPDF/SOURCE.txt" <<NOTE
SumatraPDF 3.4.6 (32-bit), a free PDF reader by Krzysztof Kowalczyk and its
contributors, licensed under the GNU General Public License version 3
(COPYING.txt). The Agente CFE runs it as a separate program to print PDFs; it
is not part of the agent and is not linked into it.

Source code: https://github.com/sumatrapdfreader/sumatrapdf (tag 3.4.6)
Web site:    https://www.sumatrapdfreader.org

This copy is SumatraPDF-3.4.6-32.exe, unchanged, from the npm package
pdf-to-printer 5.8.1 (https://registry.npmjs.org/pdf-to-printer/-/$SUMATRA_TGZ,
SHA-256 $SUMATRA_TGZ_SHA256).
NOTE

# MSI.
cp "$(bin windows_amd64.exe)" "$stage/windows/cfe-agent.exe"
cp "$stage/icons/cfe-agent.ico" README.md "$stage/windows/"
msi="$DIST/cfe-agent_${VERSION//+/_}_x64.msi"
echo "dist: wixl $(basename "$msi")"
(cd "$stage/windows" && wixl -a x64 -D "Version=$MSI_VERSION" -o "$msi" "$OLDPWD/packaging/windows/cfe-agent.wxs")

# .deb.
cp packaging/linux/* "$stage/linux/"
"$GO" run ./packaging unit "$stage/linux" # the unit, from service.SystemdUnit
cp "$(bin linux_amd64)" "$stage/linux/cfe-agent"
cp "$stage/icons/cfe-agent.png" "$stage/linux/"
gzip -9n < packaging/linux/cfe-agent.1 > "$stage/linux/cfe-agent.1.gz"
{
  echo "cfe-agent ($DEB_VERSION) unstable; urgency=medium"
  echo
  echo "  * Built from commit $(git rev-parse --short=12 HEAD)."
  echo
  echo " -- cfe-agent maintainers <maintainers@cfe-agent.invalid>  $(git log -1 --format=%cD HEAD)"
} | gzip -9n > "$stage/linux/changelog.gz"
deb="$DIST/cfe-agent_${DEB_VERSION}_amd64.deb"
echo "dist: nfpm $(basename "$deb")"
nfpm=$("$GO" tool -modfile=tools/go.mod -n nfpm) # builds it once, prints its path
(cd "$stage/linux" && DEB_VERSION=$DEB_VERSION "$nfpm" package --config "$stage/linux/nfpm.yaml" \
  --packager deb --target "$deb" >/dev/null)

rm -rf "$stage"
(cd "$DIST" && sha256sum -- * > SHA256SUMS)
echo "dist: done"
ls -l "$DIST"
