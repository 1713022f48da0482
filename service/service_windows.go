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

// stateWait bounds how long Start, Stop and Uninstall wait for the service
// while it shows no progress (its CheckPoint does not advance).
const stateWait = 30 * time.Second

// stateWaitCap bounds the whole wait, progress or not: a start that checks
// the whole store after a crash may take minutes, not forever.
const stateWaitCap = 10 * time.Minute

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
	if err := registerEventSource(c.Name); err != nil {
		_ = s.Delete()
		return fmt.Errorf("service: registering the event source: %w", err)
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
	if err := s.Delete(); err != nil {
		return err
	}
	return removeEventSource(name)
}

// Start starts the installed service and waits until it runs.
func Start(name string) error { return startWithin(name, stateWait) }

// startWithin is Start, giving up after patience without progress (tests
// shorten it).
func startWithin(name string, patience time.Duration) error {
	m, s, err := open(name)
	if err != nil {
		return err
	}
	defer m.Disconnect() //nolint:errcheck // closing a handle
	defer func() { _ = s.Close() }()
	if err := s.Start(); err != nil && !errors.Is(err, windows.ERROR_SERVICE_ALREADY_RUNNING) {
		return err
	}
	return waitState(s, svc.Running, patience)
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
	return waitState(s, svc.Stopped, stateWait)
}

func waitState(s *mgr.Service, want svc.State, patience time.Duration) error {
	w := newStateWaiter(time.Now(), patience)
	for {
		st, err := queryStatus(s)
		if err != nil {
			return err
		}
		if st.State == want {
			return nil
		}
		if want == svc.Running && st.State == svc.Stopped {
			return fmt.Errorf("%w (exit code %d, service-specific %d)", ErrStartFailed, st.Win32ExitCode, st.ServiceSpecificExitCode)
		}
		if err := w.check(time.Now(), st); err != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// queryStatus is mgr.Service.Query with the CheckPoint and WaitHint, which
// Query leaves out.
func queryStatus(s *mgr.Service) (svc.Status, error) {
	var t windows.SERVICE_STATUS_PROCESS
	var needed uint32
	err := windows.QueryServiceStatusEx(s.Handle, windows.SC_STATUS_PROCESS_INFO, (*byte)(unsafe.Pointer(&t)), uint32(unsafe.Sizeof(t)), &needed)
	if err != nil {
		return svc.Status{}, err
	}
	return svc.Status{
		State:                   svc.State(t.CurrentState),
		Accepts:                 svc.Accepted(t.ControlsAccepted),
		CheckPoint:              t.CheckPoint,
		WaitHint:                t.WaitHint,
		ProcessId:               t.ProcessId,
		Win32ExitCode:           t.Win32ExitCode,
		ServiceSpecificExitCode: t.ServiceSpecificExitCode,
	}, nil
}

// stateWaiter decides when waiting for a pending service is given up: after
// patience (stateWait) without progress (the service's CheckPoint, which a
// starting agent advances every startProgressEvery, stays the same) or
// stateWaitCap in all.
type stateWaiter struct {
	start, progress time.Time // when the wait began; when CheckPoint last changed
	checkPoint      uint32
	patience        time.Duration
}

func newStateWaiter(now time.Time, patience time.Duration) *stateWaiter {
	return &stateWaiter{start: now, progress: now, patience: patience}
}

// check records st, seen at now, and returns an error once the wait is over.
func (w *stateWaiter) check(now time.Time, st svc.Status) error {
	if st.CheckPoint != w.checkPoint {
		w.checkPoint, w.progress = st.CheckPoint, now
	}
	switch {
	case now.Sub(w.start) > stateWaitCap:
		return fmt.Errorf("service: still %s after %s", stateName(st.State), stateWaitCap)
	case now.Sub(w.progress) > w.patience:
		return fmt.Errorf("service: still %s after %s without progress", stateName(st.State), w.patience)
	}
	return nil
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
	cfg, err := queryConfig(s)
	if err != nil {
		return 0, err
	}
	return cfg.StartType, nil
}

// queryConfig reads the service's QUERY_SERVICE_CONFIG.
func queryConfig(s *mgr.Service) (*windows.QUERY_SERVICE_CONFIG, error) {
	var needed uint32
	err := windows.QueryServiceConfig(s.Handle, nil, 0, &needed)
	if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) {
		return nil, err
	}
	buf := make([]byte, needed)
	cfg := (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(&buf[0]))
	if err := windows.QueryServiceConfig(s.Handle, cfg, needed, &needed); err != nil {
		return nil, err
	}
	return cfg, nil
}

// InstalledDataDir returns the data directory the installed service called
// name runs on: the --data-dir of its command line (Config.Args).
func InstalledDataDir(name string) (string, error) {
	m, s, err := open(name)
	if err != nil {
		return "", err
	}
	defer m.Disconnect() //nolint:errcheck // closing a handle
	defer func() { _ = s.Close() }()
	cfg, err := queryConfig(s)
	if err != nil {
		return "", err
	}
	args, err := windows.DecomposeCommandLine(windows.UTF16PtrToString(cfg.BinaryPathName))
	if err != nil {
		return "", err
	}
	for i, a := range args {
		if a == "--data-dir" && i+1 < len(args) {
			return args[i+1], nil
		}
	}
	return "", fmt.Errorf("service: the command line of %s names no data directory", name)
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
// expect to wait for the next progress report (or Running).
const startWaitHint = 30 * time.Second

// startProgressEvery is how often a starting service re-sends StartPending
// with its CheckPoint advanced, so a slow open (a full store check after a
// crash) is not taken for a hung start; a var so the tests can shorten it.
var startProgressEvery = 5 * time.Second

// Run runs run under the service control manager as the service called
// name, until the manager asks it to stop (Stop, or the machine shutting
// down: ctx is then canceled) or run returns. The service is StartPending
// until run calls ready (the agent serves), Running after; StopPending while
// run winds down, then Stopped. A run that fails exits with a
// service-specific error code (ExitStartFailed before ready, ExitRunFailed
// after), so the recovery actions restart it; Run returns run's error.
func Run(name string, run func(ctx context.Context, ready func()) error) error {
	h := &handler{name: name, run: run}
	if err := svc.Run(name, h); err != nil {
		return err
	}
	return h.err
}

type handler struct {
	name string // the service's, also its event source
	run  func(ctx context.Context, ready func()) error
	err  error // run's result, for the caller of Run
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
	progress := time.NewTicker(startProgressEvery)
	defer progress.Stop()
	running := false
	for {
		select {
		case <-progress.C:
			pending.CheckPoint++
			status <- pending
		case <-readyCh:
			readyCh = nil // reported once
			running = true
			progress.Stop()
			status <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
		case h.err = <-done:
			status <- svc.Status{State: svc.StopPending}
			if h.err != nil {
				h.reportFailure(running)
			}
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

// reportFailure writes run's error to the Event Log: the only place a start
// that failed before the agent opened its log can be read. A failure to
// write it has nowhere left to go.
func (h *handler) reportFailure(running bool) {
	id, msg := uint32(eventStartFailed), "el agente CFE no pudo iniciar el servicio "+h.name+": "+h.err.Error()
	if running {
		id, msg = eventRunFailed, "el servicio "+h.name+" del agente CFE se detuvo por un error: "+h.err.Error()
	}
	_ = reportEvent(h.name, id, msg)
}
