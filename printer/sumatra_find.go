package printer

import (
	"os"
	"os/exec"
	"path/filepath"
)

// SumatraExe is SumatraPDF's executable name.
const SumatraExe = "SumatraPDF.exe"

// SumatraEnv is what FindSumatra looks at: the machine's file system,
// environment and registry. DefaultSumatraEnv is the real machine's; tests
// give their own.
type SumatraEnv struct {
	// Executable is the agent's own executable ("" when unknown).
	Executable string
	// InstallDir is the folder the installer recorded in the registry
	// ("" when none: not installed with the MSI, or not Windows).
	InstallDir string
	Getenv     func(string) string
	// IsFile reports whether path names an existing regular file.
	IsFile   func(path string) bool
	LookPath func(file string) (string, error)
}

// SumatraPlace is where FindSumatra found SumatraPDF.
type SumatraPlace string

// Places of FindSumatra, in the order it looks.
const (
	SumatraFromProfile     SumatraPlace = "indicado en el perfil (sumatra_path)"
	SumatraBesideAgent     SumatraPlace = "junto al agente (instalado con el agente)"
	SumatraInstallDir      SumatraPlace = "en la carpeta del instalador del agente"
	SumatraProgramFiles    SumatraPlace = "en Archivos de programa"
	SumatraProgramFilesX86 SumatraPlace = "en Archivos de programa (x86)"
	SumatraLocalAppData    SumatraPlace = "instalado para el usuario (LOCALAPPDATA)"
	SumatraOnPath          SumatraPlace = "en el PATH"
)

// SumatraFound is a SumatraPDF executable and where it was found.
type SumatraFound struct {
	Path  string
	Place SumatraPlace
}

// sumatraNotFoundHint says what to do when SumatraPDF is missing.
const sumatraNotFoundHint = "reinstale el agente con su instalador (MSI), que lo incluye, o instale SumatraPDF " +
	"(https://www.sumatrapdfreader.org), o indique su ubicación en el perfil (sumatra_path de la impresora)"

// FindSumatra finds SumatraPDF.exe; the first hit wins:
//
//  1. explicit (a printer's sumatra_path), which must exist when given;
//  2. SumatraPDF\SumatraPDF.exe, then SumatraPDF.exe, beside the agent's
//     executable (the MSI's layout);
//  3. SumatraPDF\SumatraPDF.exe in the installer's folder (registry);
//  4. %ProgramFiles%\SumatraPDF, %ProgramFiles(x86)%\SumatraPDF and
//     %LOCALAPPDATA%\SumatraPDF (SumatraPDF's own installers);
//  5. SumatraPDF.exe on PATH.
//
// It returns ENOTFOUND, saying what to do, when there is none.
func FindSumatra(explicit string, env SumatraEnv) (SumatraFound, error) {
	const op = "printer.FindSumatra"
	if explicit != "" {
		if env.IsFile(explicit) {
			return SumatraFound{Path: explicit, Place: SumatraFromProfile}, nil
		}
		return SumatraFound{}, notFound(op, os.ErrNotExist,
			"no se encontró SumatraPDF en %s, la ubicación que indica el perfil (sumatra_path): corríjala o bórrela "+
				"para usar el SumatraPDF instalado con el agente", explicit)
	}
	type candidate struct {
		dir   string
		file  string
		place SumatraPlace
	}
	var cands []candidate
	if env.Executable != "" {
		dir := filepath.Dir(env.Executable)
		cands = append(cands, candidate{dir, filepath.Join("SumatraPDF", SumatraExe), SumatraBesideAgent},
			candidate{dir, SumatraExe, SumatraBesideAgent})
	}
	cands = append(cands, candidate{env.InstallDir, filepath.Join("SumatraPDF", SumatraExe), SumatraInstallDir})
	for _, v := range []struct {
		name  string
		place SumatraPlace
	}{
		{"ProgramFiles", SumatraProgramFiles},
		{"ProgramFiles(x86)", SumatraProgramFilesX86},
		{"LOCALAPPDATA", SumatraLocalAppData},
	} {
		if env.Getenv != nil {
			cands = append(cands, candidate{env.Getenv(v.name), filepath.Join("SumatraPDF", SumatraExe), v.place})
		}
	}
	for _, c := range cands {
		if c.dir == "" {
			continue
		}
		if p := filepath.Join(c.dir, c.file); env.IsFile(p) {
			return SumatraFound{Path: p, Place: c.place}, nil
		}
	}
	if env.LookPath != nil {
		if p, err := env.LookPath(SumatraExe); err == nil {
			return SumatraFound{Path: p, Place: SumatraOnPath}, nil
		}
	}
	return SumatraFound{}, notFound(op, exec.ErrNotFound, "no se encontró SumatraPDF, que imprime los PDF en Windows: %s",
		sumatraNotFoundHint)
}

// DefaultSumatraEnv is the running machine's: its executable, environment,
// files, PATH and (on Windows) the installer's registry entry.
func DefaultSumatraEnv() SumatraEnv {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	return SumatraEnv{Executable: exe, InstallDir: installDir(), Getenv: os.Getenv, IsFile: isFile,
		LookPath: exec.LookPath}
}

// isFile reports whether path is an existing regular file.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
