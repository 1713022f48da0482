// Package auth is the emulator's room of who calls and what the caller may
// do (interface §5, §8.2, §8.3): users' logins and sessions (HS512 JWTs and
// rotating refresh tokens, with reuse detection), password recovery, user API
// keys, company API keys and their management, and the protections in front
// of them: login failures counted per address, network and identifier, the
// per-key rate limits, and the throttle of addresses that send invalid keys.
//
// Guard authenticates requests and puts the Principal (a user with a JWT, or
// a company key) in their context; every other room reads it with
// PrincipalOf and asks it which company a request acts for. Sessions and Keys
// serve the auth and key routes. Counters are the protections' counters that
// /sandbox/metrics shows.
//
// It reads and writes the shared records of sandbox/data and answers in the
// shapes of sandbox/web; the recovery mail goes out through a Mailer the
// composition root gives it (the mail room). Its use of internal/throttle is
// in one file, keythrottle.go.
package auth
