package tray

import (
	"runtime"
	"strings"
	"unicode/utf8"
)

// menuLabel is a menu item's title as the platform's menus show it
// literally: dbusmenu (Linux) reads "_" as the mnemonic marker and Windows'
// menus read "&", so a printer named termica_raster would show as
// "termicaraster" (issue 34). The marker is doubled, which both read as the
// character itself. Every title the menu sets goes through it.
func menuLabel(s string) string { return escapeMnemonics(runtime.GOOS, s) }

// escapeMnemonics doubles goos's mnemonic marker in s.
func escapeMnemonics(goos, s string) string {
	switch goos {
	case "windows":
		return strings.ReplaceAll(s, "&", "&&")
	case "darwin":
		return s
	}
	return strings.ReplaceAll(s, "_", "__")
}

// maxLineRunes is the longest line of the menu's reason: at 1024 px, a
// menu line longer than this runs off the screen's edge (issue 34).
const maxLineRunes = 60

// wrapText breaks s into lines of at most width characters at spaces; a
// word longer than width is cut.
func wrapText(s string, width int) []string {
	var lines []string
	var line strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		wl := utf8.RuneCountInString(w)
		if n > 0 && n+1+wl <= width {
			line.WriteByte(' ')
			line.WriteString(w)
			n += 1 + wl
			continue
		}
		if n > 0 {
			lines = append(lines, line.String())
			line.Reset()
		}
		for wl > width {
			r := []rune(w)
			lines = append(lines, string(r[:width]))
			w = string(r[width:])
			wl -= width
		}
		line.WriteString(w)
		n = wl
	}
	if n > 0 {
		lines = append(lines, line.String())
	}
	return lines
}

// clipLines keeps the first max lines of lines; when some are dropped the
// last kept line ends with "…" (within width).
func clipLines(lines []string, max, width int) []string {
	if len(lines) <= max {
		return lines
	}
	lines = lines[:max:max]
	last := []rune(lines[max-1])
	if len(last) >= width {
		last = last[:width-1]
	}
	lines[max-1] = strings.TrimRight(string(last), " ") + "…"
	return lines
}
