package autostart

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/windows/registry"
)

// TestNative_windows works on a throwaway Run-like key, under HKCU and (when
// this user may write there: an administrator, or Wine) HKLM, so the real
// Run keys are not touched.
func TestNative_windows(t *testing.T) {
	t.Parallel()
	key := fmt.Sprintf(`Software\cfe-agent-test-%d\Run`, time.Now().UnixNano())
	p := native{key: key}
	t.Cleanup(func() {
		for _, root := range []registry.Key{registry.CURRENT_USER, registry.LOCAL_MACHINE} {
			_ = registry.DeleteKey(root, key)
			_ = registry.DeleteKey(root, key[:len(key)-len(`\Run`)])
		}
	})

	if err := enable(p, agent); err != nil {
		t.Fatal(err)
	}
	k, err := registry.OpenKey(registry.CURRENT_USER, key, registry.QUERY_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := k.GetStringValue("cfe-agent")
	k.Close()
	if err != nil || got != RunCommand(agent) {
		t.Fatalf("HKCU value = %q, %v; want %q", got, err, RunCommand(agent))
	}
	if st, err := query(p, "cfe-agent"); err != nil || !st.User || st.Machine || st.UserPath != `HKCU\`+key+`\cfe-agent` {
		t.Fatalf("Query = %+v, %v", st, err)
	}

	// The installer's machine-wide value.
	mk, _, err := registry.CreateKey(registry.LOCAL_MACHINE, key, registry.SET_VALUE)
	if err != nil {
		t.Skipf("cannot write HKLM as this user (%v): the machine-wide case is covered by TestEnable_machineWide", err)
	}
	err = mk.SetStringValue("cfe-agent", RunCommand(agent))
	mk.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := enable(p, agent); err != nil {
		t.Fatal(err)
	}
	st, err := query(p, "cfe-agent")
	if err != nil || st.User || !st.Machine || st.MachinePath != `HKLM\`+key+`\cfe-agent` {
		t.Fatalf("with the machine-wide value, Query = %+v, %v (the per-user duplicate must go)", st, err)
	}
	custom := agent
	custom.Custom = true
	if err := enable(p, custom); !errors.Is(err, ErrConflict) {
		t.Fatalf("Enable with a data directory beside HKLM = %v, want ErrConflict", err)
	}
	if st, err := query(p, "cfe-agent"); err != nil || st.User {
		t.Fatalf("a refused Enable wrote the HKCU value: %+v, %v", st, err)
	}
	if err := disable(p, "cfe-agent"); !errors.Is(err, ErrMachineWide) {
		t.Fatalf("Disable = %v, want ErrMachineWide", err)
	}
}
