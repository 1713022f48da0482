// Package sandbox is an offline emulator of the hosted CFE service: the same
// paths, fields, status codes, headers and messages as the contract in
// seed-interface.md, over its own bbolt file.
//
// It owns the emulator's users, companies, issuing points, company API keys,
// sessions (JWT and refresh tokens), login protection, API key rate limits and
// the records of issued CFEs. A refresh token presented again after it was
// exchanged revokes its whole session (token theft detection), and addresses
// that send invalid API keys are throttled (keythrottle.go). Signing, numbering and PDF rendering are not its
// own: it composes the issuer, signer, store and pdf packages like cmd does.
//
// Every choice the interface leaves open ("not shown") is a named value in
// policy.go and is described in docs/sandbox.md.
package sandbox
