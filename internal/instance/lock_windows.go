package instance

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// mutexName names the data directory's mutex. It lives in the Global
// namespace so that the service (session 0) and a cashier's tray agent (their
// own session) exclude each other. The folder is named by its final path
// (finalPath: 8.3 names, junctions and symbolic links resolved), else, when
// it cannot be opened, by its cleaned absolute path; paths are compared
// case-insensitively, as Windows does.
func mutexName(dataDir string) string {
	dir, err := finalPath(dataDir)
	if err != nil {
		dir = dataDir
		if abs, aerr := filepath.Abs(dataDir); aerr == nil {
			dir = abs
		}
	}
	sum := sha256.Sum256([]byte(strings.ToLower(filepath.Clean(dir))))
	return `Global\cfe-agent-` + hex.EncodeToString(sum[:16])
}

// GetFinalPathNameByHandle's flags (fileapi.h), which x/sys/windows does
// not name: the normalized name, with the drive letter.
const (
	fileNameNormalized = 0x0
	volumeNameDOS      = 0x0
)

// finalPath is the path Windows gives the open folder dir
// (GetFinalPathNameByHandle, normalized, with its drive letter), without the
// \\?\ prefix.
func finalPath(dir string) (string, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return "", err
	}
	// No access rights are needed to ask a handle its name; backup
	// semantics opens a directory.
	h, err := windows.CreateFile(p, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return "", err
	}
	defer func() { _ = windows.CloseHandle(h) }()
	buf := make([]uint16, windows.MAX_PATH)
	for {
		n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), fileNameNormalized|volumeNameDOS)
		if err != nil {
			return "", err
		}
		if int(n) < len(buf) {
			name := windows.UTF16ToString(buf[:n])
			if rest, ok := strings.CutPrefix(name, `\\?\UNC\`); ok {
				return `\\` + rest, nil
			}
			return strings.TrimPrefix(name, `\\?\`), nil
		}
		buf = make([]uint16, n) // n counts the terminating NUL
	}
}

// Lock creates the data directory's named mutex; ErrHeld when
// it exists already (another agent, maybe in another session or as the
// service, whose mutex this user may not even open). Windows destroys the
// mutex with the last handle: a crashed agent leaves no stale lock. The
// function returned releases it.
func Lock(dataDir string) (func(), error) {
	name, err := windows.UTF16PtrFromString(mutexName(dataDir))
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateMutex(nil, false, name)
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		if h != 0 {
			_ = windows.CloseHandle(h)
		}
		return nil, ErrHeld
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = windows.CloseHandle(h) }, nil
}
