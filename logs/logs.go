package logs

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"gopkg.in/natefinch/lumberjack.v2"
)

// FileName is the name of the current log file in the log directory.
const FileName = "cfe-agent.log"

// Mask replaces a redacted value.
const Mask = "***"

// Dir returns the log directory of a data directory.
func Dir(dataDir string) string { return filepath.Join(dataDir, "logs") }

// Config configures Open. Only Dir is required.
type Config struct {
	Dir    string     // the log directory; created when missing
	Stderr io.Writer  // the second copy of every record; os.Stderr when nil
	Level  slog.Level // the lowest level written
	// MaxSizeMB rotates the file at this size (10 when zero); MaxBackups old
	// files are kept (5 when zero), compressed, for at most MaxAgeDays (30
	// when zero).
	MaxSizeMB, MaxBackups, MaxAgeDays int
}

// Log is an open log: its logger, its redactor and its file.
type Log struct {
	*slog.Logger
	Redactor *Redactor
	Path     string // the current log file
	file     *lumberjack.Logger
}

// Open creates the log directory and returns a logger writing to stderr and
// to the rotated file. Close it when done.
func Open(cfg Config) (*Log, error) {
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("logs: creating the log directory: %w", err)
	}
	file := &lumberjack.Logger{
		Filename:   filepath.Join(cfg.Dir, FileName),
		MaxSize:    cmpOr(cfg.MaxSizeMB, 10),
		MaxBackups: cmpOr(cfg.MaxBackups, 5),
		MaxAge:     cmpOr(cfg.MaxAgeDays, 30),
		Compress:   true,
	}
	red := &Redactor{}
	h := slog.NewTextHandler(io.MultiWriter(cfg.Stderr, file), &slog.HandlerOptions{
		Level:       cfg.Level,
		ReplaceAttr: red.ReplaceAttr,
	})
	return &Log{Logger: slog.New(h), Redactor: red, Path: file.Filename, file: file}, nil
}

// Close closes the log file.
func (l *Log) Close() error { return l.file.Close() }

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// secretKeys are fragments of attribute keys whose values are always hidden.
var secretKeys = []string{"password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "cookie", "private_key"}

// minSecretLen is the shortest value SetSecrets accepts: shorter ones would
// cut ordinary words out of the log and are no secret anyway.
const minSecretLen = 4

// Redactor hides secrets from log records; use its ReplaceAttr in
// slog.HandlerOptions. It is safe for concurrent use.
type Redactor struct {
	mu       sync.RWMutex
	replacer *strings.Replacer // nil when no secret is known
}

// SetSecrets replaces the known secret values (empty and very short ones are
// ignored).
func (r *Redactor) SetSecrets(secrets ...string) {
	var pairs []string
	// Longest first, so that a secret holding another is cut whole.
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, s := range secrets {
		if len(s) >= minSecretLen {
			pairs = append(pairs, s, Mask)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.replacer = nil
	if len(pairs) > 0 {
		r.replacer = strings.NewReplacer(pairs...)
	}
}

// ReplaceAttr hides a by key name, or cuts known secrets out of its value.
// Records' messages pass through it too (key "msg").
func (r *Redactor) ReplaceAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Key != slog.MessageKey && secretKey(a.Key) {
		return slog.String(a.Key, Mask)
	}
	r.mu.RLock()
	rep := r.replacer
	r.mu.RUnlock()
	if rep == nil {
		return a
	}
	switch a.Value.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(rep.Replace(a.Value.String()))
	case slog.KindAny:
		// Errors, Stringers and structs: redact their text.
		s := fmt.Sprint(a.Value.Any())
		if r := rep.Replace(s); r != s {
			a.Value = slog.StringValue(r)
		}
	}
	return a
}

func secretKey(key string) bool {
	k := strings.ToLower(key)
	return slices.ContainsFunc(secretKeys, func(s string) bool { return strings.Contains(k, s) })
}
