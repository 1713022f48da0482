package main_test

import (
	"os"
	"strings"
	"testing"
)

// TestAgent_DamagedStoreNeverPanics is item 4 of issue 17: a store whose
// data pages were zeroed (a failing disk) made the agent die with a Go panic
// trace. Every command that opens the store must instead exit non-zero with
// the Spanish message naming the file and what to do; after the technician
// moves the file aside, the agent starts on a new one and numbering goes on
// above the numbering journal.
func TestAgent_DamagedStoreNeverPanics(t *testing.T) {
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "antes", 1, 3)
	a.stop(t)

	path := storeFile(dataDir)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	clear(b[2*ps:]) // every page but the two meta pages
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0"},
		{"cae", "list"},
		{"cae", "used-elsewhere", "101", "A", "0", "--reason", "prueba"},
	} {
		t.Run(strings.Join(args[:min(2, len(args))], " "), func(t *testing.T) {
			out, code := runCLI(t, env, args...)
			if code == 0 {
				t.Fatalf("%s on a damaged store exited 0:\n%s", args, out)
			}
			for _, bad := range []string{"panic:", "goroutine ", "SIGBUS", "SIGSEGV"} {
				if strings.Contains(out, bad) {
					t.Fatalf("%s on a damaged store printed a Go trace (%q):\n%s", args, bad, out)
				}
			}
			for _, want := range []string{"el archivo de datos " + path + " está dañado", "consérvelo", "restaure una copia de seguridad", "diario de numeración"} {
				if !strings.Contains(out, want) {
					t.Fatalf("%s on a damaged store does not say %q:\n%s", args, want, out)
				}
			}
		})
	}

	// The technician moves the file aside, as the message says: the agent
	// starts on a new store and numbering resumes above the journal.
	if err := os.Rename(path, path+".dañado"); err != nil {
		t.Fatal(err)
	}
	a = startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "nuevo", 4, 1)
	a.stop(t)
}
