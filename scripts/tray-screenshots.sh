#!/usr/bin/env bash
# Takes the screenshots of the tray in docs/tray/ from a real StatusNotifier
# host: Xvfb (1024 × 600, the small screen the issue was seen on), a private
# session bus, gtk-sni-tray-standalone (a GTK tray that renders the item's
# dbusmenu as desktops do, mnemonics included) and the agent built from this
# tree, in two situations:
#   rojo-zona-horaria.png  a sandbox profile on a machine in UTC: MODO PRUEBA,
#                          the red reason wrapped at 60 characters, Detalles…
#   impresoras.png         the default printer's submenu: termica_raster keeps
#                          its underscore
#   salir.png              Salir's question (a desktop without zenity or
#                          kdialog: the question is a submenu)
#   ambar-impresora.png    the default printer (a thermal printer on TCP) is
#                          off: amber, the printer named
# Needs: Xvfb, dbus-daemon, gtk-sni-tray-standalone
# (haskell-gtk-sni-tray-utils), xdotool, xwd (x11-apps), go. Usage:
#   scripts/tray-screenshots.sh [OUTDIR]   (default docs/tray)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:-docs/tray}" && cd "${1:-docs/tray}" && pwd)
for tool in Xvfb dbus-daemon gtk-sni-tray-standalone xdotool xwd go; do
  command -v "$tool" >/dev/null || { echo "tray-screenshots: $tool is not installed" >&2; exit 1; }
done
work=$(mktemp -d)
pids=()
cleanup() {
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/cfe-agent" ./cmd/cfe-agent
go build -o "$work/xwd2png" ./scripts/xwd2png

display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1024x600x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
pids+=($!)
export DISPLAY=$display
for _ in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.1; done
dbus-daemon --session --nofork --print-address=1 >"$work/bus" 2>"$work/bus.log" &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/bus" ] && break; sleep 0.1; done
export DBUS_SESSION_BUS_ADDRESS=$(head -1 "$work/bus")
gtk-sni-tray-standalone --top --end -s 32 -w >"$work/host.log" 2>&1 &
pids+=($!)
sleep 2

shot() { sleep 1.5; xwd -root -silent | "$work/xwd2png" >"$out/$1"; echo "tray-screenshots: $out/$1"; }

# agent NAME TZ YAML-EDIT: runs the agent on a fresh data directory whose
# default configuration python3 edits with the expression YAML-EDIT (on cfg).
agent() {
  local dir=$work/$1
  mkdir -p "$dir/home"
  python3 - "$dir/config.yaml" "$3" <<'PY'
import sys
cfg = open("profiles/default.yaml").read()
exec(sys.argv[2])
open(sys.argv[1], "w").write(cfg)
PY
  HOME=$dir/home XDG_CONFIG_HOME=$dir/home/.config CFE_AGENT_DATA_DIR=$dir CFE_AGENT_WITNESS_DIR=$dir-witness TZ=$2 \
    "$work/cfe-agent" --listen 127.0.0.1:0 >"$dir.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q "cfe-agent listening" "$dir.log" && break; sleep 0.1; done
  sleep 3 # the icon registers, and the first refresh sets the menu
}

# Red: the machine's zone is UTC. A second printer with an underscore.
agent rojo UTC 'cfg = cfg.replace("        dir: impresiones\n", "        dir: impresiones\n      termica_raster:\n        backend: dir\n        dir: termica\n", 1)'
xdotool mousemove 1008 16 click 3
shot rojo-zona-horaria.png
xdotool mousemove 680 399
shot impresoras.png
xdotool mousemove 700 470 sleep 0.3 mousemove 700 500 sleep 0.3 mousemove 705 501
shot salir.png
xdotool key Escape key Escape key Escape
kill "${pids[-1]}"; unset 'pids[-1]'; sleep 1

# Amber: the default printer is a thermal printer on a port nobody listens on.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
agent ambar America/Montevideo "cfg = cfg.replace('    printers:\n', '    printers:\n      termica:\n        backend: tcp\n        protocol: escpos\n        address: 127.0.0.1:$port\n', 1).replace('default_printer: archivo', 'default_printer: termica')"
xdotool mousemove 1008 16 click 3
shot ambar-impresora.png
