package service

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"
)

// stateWait bounds how long Stop and Uninstall wait for the service to stop.
const stateWait = 30 * time.Second

// restartDelay is the wait before the service control manager restarts a
// failed agent.
const restartDelay = 5 * time.Second

// connect opens the service control manager with the rights to create and
// control services; ErrNotAdmin when the caller lacks them.
func connect() (*mgr.Mgr, error) {
	m, err := mgr.Connect()
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return nil, ErrNotAdmin
	}
	return m, err
}

// open opens the installed service called name.
func open(name string) (*mgr.Mgr, *mgr.Service, error) {
	if !validName(name) {
		return nil, nil, fmt.Errorf("service: invalid name %q", name)
	}
	m, err := connect()
	if err != nil {
		return nil, nil, err
	}
	s, err := m.OpenService(name)
	if err != nil {
		_ = m.Disconnect()
		if errors.Is(err, windows.ERROR_SERVICE_DOES_NOT_EXIST) {
			return nil, nil, ErrNotInstalled
		}
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			return nil, nil, ErrNotAdmin
		}
		return nil, nil, err
	}
	return m, s, nil
}

// Install creates the service (automatic start, LocalSystem, restarted by
// the service control manager when the agent fails) and starts it.
func Install(c Config) error {
	if err := c.check(filepath.IsAbs); err != nil {
		return err
	}
	m, err := connect()
	if err != nil {
		return err
	}
	defer m.Disconnect() //nolint:errcheck // closing a handle
	if s, err := m.OpenService(c.Name); err == nil {
		_ = s.Close()
		return fmt.Errorf("service: %s is already installed", c.Name)
	}
	s, err := m.CreateService(c.Name, c.Exe, mgr.Config{
		StartType:    mgr.StartAutomatic,
		ErrorControl: mgr.ErrorNormal,
		DisplayName:  c.DisplayName,
		Description:  c.Description,
	}, c.Args()...)
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return ErrNotAdmin
	}
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	if err := setRecovery(s); err != nil {
		_ = s.Delete()
		return fmt.Errorf("service: setting the recovery actions: %w", err)
	}
	return s.Start()
}

// setRecovery makes the service control manager restart the agent 5 s after
// it fails, whether it crashed or exited with an error. A manager that does
// not know a setting (ERROR_INVALID_LEVEL: Wine) keeps its default, no
// restart: the install goes on.
func setRecovery(s *mgr.Service) error {
	restart := mgr.RecoveryAction{Type: mgr.ServiceRestart, Delay: restartDelay}
	err := s.SetRecoveryActions([]mgr.RecoveryAction{restart, restart, restart}, uint32((24 * time.Hour).Seconds()))
	if err == nil {
		err = s.SetRecoveryActionsOnNonCrashFailures(true)
	}
	if errors.Is(err, windows.ERROR_INVALID_LEVEL) {
		return nil
	}
	return err
}

// Uninstall stops the service and deletes it. The data directory stays.
func Uninstall(name string) error {
	m, s, err := open(name)
	if err != nil {
		return err
	}
	defer m.Disconnect() //nolint:errcheck // closing a handle
	defer func() { _ = s.Close() }()
	if err := stop(s); err != nil {
		return err
	}
	return s.Delete()
}

// Start starts the installed service and waits until it runs.
func Start(name string) error {
	m, s, err := open(name)
	if err != nil {
		return err
	}
	defer m.Disconnect() //nolint:errcheck // closing a handle
	defer func() { _ = s.Close() }()
	if err := s.Start(); err != nil && !errors.Is(err, windows.ERROR_SERVICE_ALREADY_RUNNING) {
		return err
	}
	return waitState(s, svc.Running)
}

// Stop stops the installed service and waits until it has stopped.
func Stop(name string) error {
	m, s, err := open(name)
	if err != nil {
		return err
	}
	defer m.Disconnect() //nolint:errcheck // closing a handle
	defer func() { _ = s.Close() }()
	return stop(s)
}

func stop(s *mgr.Service) error {
	st, err := s.Query()
	if err != nil {
		return err
	}
	if st.State == svc.Stopped {
		return nil
	}
	if _, err := s.Control(svc.Stop); err != nil && !errors.Is(err, windows.ERROR_SERVICE_NOT_ACTIVE) {
		return err
	}
	return waitState(s, svc.Stopped)
}

func waitState(s *mgr.Service, want svc.State) error {
	deadline := time.Now().Add(stateWait)
	for {
		st, err := s.Query()
		if err != nil {
			return err
		}
		if st.State == want {
			return nil
		}
		if want == svc.Running && st.State == svc.Stopped {
			return errors.New("service: the service stopped while starting (see the agent's log)")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("service: still %s after %s", stateName(st.State), stateWait)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Query reports the service's state.
func Query(name string) (State, error) {
	m, s, err := open(name)
	if errors.Is(err, ErrNotInstalled) {
		return State{}, nil
	}
	if err != nil {
		return State{}, err
	}
	defer m.Disconnect() //nolint:errcheck // closing a handle
	defer func() { _ = s.Close() }()
	st, err := s.Query()
	if err != nil {
		return State{Installed: true}, err
	}
	out := State{Installed: true, Running: st.State == svc.Running, Detail: stateName(st.State)}
	start, err := startType(s)
	out.Enabled = start == mgr.StartAutomatic
	return out, err
}

// startType reads the service's start type alone (mgr.Service.Config also
// reads settings Wine does not know).
func startType(s *mgr.Service) (uint32, error) {
	var needed uint32
	err := windows.QueryServiceConfig(s.Handle, nil, 0, &needed)
	if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) {
		return 0, err
	}
	buf := make([]byte, needed)
	cfg := (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(&buf[0]))
	if err := windows.QueryServiceConfig(s.Handle, cfg, needed, &needed); err != nil {
		return 0, err
	}
	return cfg.StartType, nil
}

func stateName(s svc.State) string {
	switch s {
	case svc.Stopped:
		return "detenido"
	case svc.StartPending:
		return "iniciándose"
	case svc.StopPending:
		return "deteniéndose"
	case svc.Running:
		return "en ejecución"
	case svc.ContinuePending:
		return "reanudándose"
	case svc.PausePending:
		return "pausándose"
	case svc.Paused:
		return "en pausa"
	}
	return fmt.Sprintf("estado %d", s)
}

// IsService reports whether the service control manager started this
// process.
func IsService() bool {
	if ok, err := svc.IsWindowsService(); err == nil && ok {
		return true
	}
	// svc.IsWindowsService also wants the manager in session 0, which Wine
	// does not have: its services.exe runs in session 1. Only the manager
	// starts programs from services.exe.
	return parentIsServicesExe()
}

// parentIsServicesExe reports whether the parent process's image is
// services.exe, the service control manager.
func parentIsServicesExe() bool {
	var pbi windows.PROCESS_BASIC_INFORMATION
	size := uint32(unsafe.Sizeof(pbi))
	if windows.NtQueryInformationProcess(windows.CurrentProcess(), windows.ProcessBasicInformation, unsafe.Pointer(&pbi), size, &size) != nil {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pbi.InheritedFromUniqueProcessId))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h) //nolint:errcheck // closing a handle
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if windows.QueryFullProcessImageName(h, 0, &buf[0], &n) != nil {
		return false
	}
	return strings.EqualFold(filepath.Base(windows.UTF16ToString(buf[:n])), "services.exe")
}

// Exit codes of a failed service (service-specific, so the recovery
// actions apply and `sc query` shows which step failed).
const (
	// ExitStartFailed: run returned before it called ready (the agent could
	// not open: a bad configuration, a busy port, a locked store).
	ExitStartFailed = 1
	// ExitRunFailed: run failed after the service was running.
	ExitRunFailed = 2
)

// startWaitHint is the StartPending wait hint: how long the manager should
// expect opening the agent to take before it reports Running.
const startWaitHint = 30 * time.Second

// Run runs run under the service control manager as the service called
// name, until the manager asks it to stop (Stop, or the machine shutting
// down: ctx is then canceled) or run returns. The service is StartPending
// until run calls ready (the agent serves), Running after; StopPending while
// run winds down, then Stopped. A run that fails exits with a
// service-specific error code (ExitStartFailed before ready, ExitRunFailed
// after), so the recovery actions restart it; Run returns run's error.
func Run(name string, run func(ctx context.Context, ready func()) error) error {
	h := &handler{run: run}
	if err := svc.Run(name, h); err != nil {
		return err
	}
	return h.err
}

type handler struct {
	run func(ctx context.Context, ready func()) error
	err error // run's result, for the caller of Run
}

func (h *handler) Execute(_ []string, req <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	pending := svc.Status{State: svc.StartPending, WaitHint: uint32(startWaitHint.Milliseconds())}
	status <- pending
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	readyCh := make(chan struct{})
	var once sync.Once
	ready := func() { once.Do(func() { close(readyCh) }) }
	done := make(chan error, 1)
	go func() { done <- h.run(ctx, ready) }()
	running := false
	for {
		select {
		case <-readyCh:
			readyCh = nil // reported once
			running = true
			status <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
		case h.err = <-done:
			status <- svc.Status{State: svc.StopPending}
			switch {
			case h.err == nil:
				return false, 0
			case running:
				return true, ExitRunFailed
			default:
				return true, ExitStartFailed
			}
		case r := <-req:
			switch r.Cmd {
			case svc.Interrogate:
				status <- r.CurrentStatus
			case svc.Stop, svc.Shutdown:
				// Only accepted once Running (Accepts); a shutdown during
				// the start stops the same way.
				status <- svc.Status{State: svc.StopPending, WaitHint: uint32(stateWait.Milliseconds())}
				cancel()
				h.err = <-done
				return false, 0
			}
		}
	}
}
