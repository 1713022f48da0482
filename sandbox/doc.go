// Package sandbox is an offline emulator of the hosted CFE service: the same
// paths, fields, status codes, headers and messages as the contract in
// seed-interface.md, over its own bbolt file. It is the emulator's
// composition root: Server opens the data file, builds the rooms, wires each
// room's needs to another's parts, and serves the one route table
// (routes.go). First-run data and the seed (bootstrap.go, seed.go) and the
// command line's Admin are here too.
//
// The rooms, each a package with its own types (docs/sandbox.md, "Rooms"):
//
//	sandbox/data     the data file (DB, the one owner of the shared state) and the shared records
//	sandbox/web      HTTP conventions: request ids, error shapes, JSON bodies
//	sandbox/auth     logins, sessions, keys and their protections; the Principal of a request
//	sandbox/issuing  issuing core and routes: emission, annulment, delivered CFEs, buscar, PDFs
//	sandbox/reports  charts and exports (Excel, accounting CSV, zip of PDFs)
//	sandbox/mail     SMTP sending, CFEs by e-mail and their history
//	sandbox/dgi      DGI's side: envelopes today, the provider's exchange with DGI next
//	sandbox/account  the web account area (/cuenta/)
//
// Imports run one way: data and web at the bottom, auth above them, issuing
// above auth, and reports, mail and dgi above issuing; account needs only
// web. A room that reads another's parts declares the narrow interface it
// needs (reports.CFEs, mail.Printer, dgi.CFEs, auth.Mailer), and this package
// fills it. internal/importrules checks the directions.
//
// Signing, numbering and PDF rendering are not the emulator's own: the
// issuing room composes the issuer, signer, store and pdf packages like cmd
// does. Every choice the interface leaves open ("not shown") is a named value
// in the policy.go of the room it belongs to, described in docs/sandbox.md.
package sandbox
