// Package app is the agent's application: the composition of one profile's
// parts and the agent's use cases over them, between the command line
// (cmd/cfe-agent, which parses flags into Options and wires the adapters)
// and the domain and adapters below it.
//
// Agent (Open) is one profile's configuration, store, signer, issuer and
// hosted client; one-shot commands open it, use it and close it. Runner keeps
// the running agent's Session open — the Agent, its Facade, the local module
// that serves the Facade (which cmd/cfe-agent builds: the application knows
// no HTTP), and the background work: the outbox's deliverer, the numbering
// check, automatic backups, the daily archive — and reopens it when the tray
// switches the profile or the default printer; it implements tray.Agent
// in-process.
//
// Facade is the one in-process entry to a serving agent's use cases:
// signing, the state report (built with health.Report from the agent's
// facts), printing and the tray's reprint, the printer listing, the status
// page's view and backups. The local module calls it through the interfaces
// it declares, the tray through the Runner, the status page through
// StatusPage: all of them see the same answers.
//
// The store's commit notification (store.DB.WatchCommits) wakes the
// deliverer and drives backup.every_n: no decorator around signing.
//
// Besides, the package holds what the technician's commands share with the
// running agent: the run file and the lookup of a running agent (Live), the
// backup helpers, printing's wiring from a profile, and the diagnostic
// archive.
//
// app imports the domain (cfe), the use cases (issuer, printing), the
// adapters it composes, health, the state report's wire types and their
// client, and tray for the port it implements; never the HTTP server
// (localapi), and nothing but cmd/cfe-agent imports it.
package app
