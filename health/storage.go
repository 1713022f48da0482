package health

import (
	"fmt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// Free-space thresholds of the data directory's filesystem. A commit writes a
// few pages per CFE (tens of KB with its signed XML), the numbering journal
// rewrites a small file, and bbolt grows its file in steps of up to 1 GB
// once large, so:
//   - under storageErrorBytes (20 MB) the next commits may fail at any
//     moment: status "error";
//   - under storageWarnBytes (200 MB), or under storageWarnPercent (5 %) of
//     the filesystem while that is less than storageWarnCap (1 GB), there is
//     room for now but not for long: "degraded". The cap keeps a large disk
//     from warning with tens of GB free; the percentage warns earlier on the
//     small disks of POS machines, which fill faster.
const (
	storageErrorBytes  = 20 << 20
	storageWarnBytes   = 200 << 20
	storageWarnPercent = 5
	storageWarnCap     = 1 << 30
)

// storageWarnBelow is the free space under which a filesystem of total bytes
// is "degraded".
func storageWarnBelow(total uint64) uint64 {
	return max(storageWarnBytes, min(total/100*storageWarnPercent, storageWarnCap))
}

// addStorage reports the disk. A failed last commit means the next ones are
// likely to fail too: "error" until one succeeds. Free space under the
// thresholds above is "degraded" or "error" on its own, before any commit
// fails. A free space that cannot be read is only reported.
func addStorage(rep *apitype.StateReport, s *cfe.Storage) {
	if s == nil {
		return
	}
	sr := &apitype.StorageReport{Status: apitype.HealthOK, Storage: *s, Warnings: []string{}}
	rep.Storage = sr
	flag := func(status, warning string) {
		if severity(status) > severity(sr.Status) {
			sr.Status = status
		}
		sr.Warnings = append(sr.Warnings, warning)
		Flag(rep, status, warning)
	}
	if s.LastWriteError != "" {
		at := s.LastWriteErrorAt.In(cfe.Montevideo)
		sr.LastWriteErrorAt = at
		flag(apitype.HealthError, fmt.Sprintf("no se pudo guardar el último comprobante (%s): %s; los comprobantes no se firman "+
			"hasta que se pueda escribir en %s", at.Format("02/01 15:04:05"), s.LastWriteError, s.Dir))
	}
	if s.SpaceError != "" || s.TotalBytes == 0 {
		return
	}
	free := fmt.Sprintf("quedan %s libres de %s en el disco de los datos (%s)", formatBytes(s.FreeBytes), formatBytes(s.TotalBytes), s.Dir)
	switch {
	case s.FreeBytes < storageErrorBytes:
		flag(apitype.HealthError, free+": no alcanza para guardar comprobantes; libere espacio")
	case s.FreeBytes < storageWarnBelow(s.TotalBytes):
		flag(apitype.HealthDegraded, free+": libere espacio pronto")
	}
}

// formatBytes writes n in Spanish units: "512 KB", "18,4 MB", "3,2 GB".
func formatBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return decimalComma(float64(n)/(1<<30)) + " GB"
	case n >= 1<<20:
		return decimalComma(float64(n)/(1<<20)) + " MB"
	}
	return fmt.Sprintf("%d KB", n>>10)
}

// decimalComma formats x with one decimal and a decimal comma.
func decimalComma(x float64) string {
	s := fmt.Sprintf("%.1f", x)
	return s[:len(s)-2] + "," + s[len(s)-1:]
}
