package store

import (
	"errors"

	"golang.org/x/sys/windows"
)

// FreeSpace reports the space left to this process's user and the size of
// the volume that holds dir, in bytes (GetDiskFreeSpaceEx: quotas counted).
func FreeSpace(dir string) (free, total uint64, err error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, 0, err
	}
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, nil); err != nil {
		return 0, 0, err
	}
	return free, total, nil
}

// writeCause names the system errors of a write that a technician can act
// on; "" for any other.
func writeCause(err error) string {
	switch {
	case errors.Is(err, windows.ERROR_DISK_FULL), errors.Is(err, windows.ERROR_HANDLE_DISK_FULL):
		return "el disco está lleno"
	case errors.Is(err, windows.ERROR_WRITE_PROTECT):
		return "el disco es de solo lectura"
	case errors.Is(err, windows.ERROR_CRC), errors.Is(err, windows.ERROR_IO_DEVICE):
		return "error de entrada/salida del disco"
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return "no hay permiso para escribir los datos"
	}
	return ""
}
