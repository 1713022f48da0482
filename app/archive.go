package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// Archived is what "cfe-agent archive" moved.
type Archived struct {
	Before cfe.Date
	store.ArchiveResult
	Files map[int]string // the yearly archive of each year moved into, by year
}

// ArchiveYears moves the delivered CFEs of the active profile signed before
// the day (zero: the first day the profile keeps, profiles.Archive) to the
// store's yearly archives (store.DB.Archive). The agent must be stopped.
func ArchiveYears(ctx context.Context, opts Options, before cfe.Date, log *slog.Logger) (*Archived, error) {
	a, err := Open(ctx, opts, log)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if before.IsZero() {
		before = a.Profile.Archive.Before(time.Now())
	}
	res, err := a.DB.Archive(ctx, before)
	if err != nil {
		return nil, err
	}
	out := &Archived{Before: before, ArchiveResult: res, Files: map[int]string{}}
	for y := range res.Years {
		out.Files[y] = a.DB.ArchivePath(y)
	}
	return out, nil
}

// Write writes the technician's report: how many moved, per year and file,
// and what stays in the store and why.
func (r *Archived) Write(w io.Writer) {
	fmt.Fprintf(w, "%d CFE firmados antes del %s movidos a archivos históricos\n", r.Moved, r.Before)
	for _, y := range slices.Sorted(maps.Keys(r.Years)) {
		fmt.Fprintf(w, "  %d: %d CFE en %s\n", y, r.Years[y], filepath.Base(r.Files[y]))
	}
	var kept []string
	for _, s := range slices.Sorted(maps.Keys(r.Kept)) {
		kept = append(kept, fmt.Sprintf("%s: %d", s, r.Kept[s]))
	}
	if len(kept) > 0 {
		fmt.Fprintf(w, "quedan en el archivo de datos (sin entregar al servicio, o después de uno sin entregar): %s\n",
			strings.Join(kept, ", "))
	}
}
