// Package app is the agent's application layer: the composition of one
// profile's parts (configuration, store, signer, issuer, hosted client:
// Agent, Open) and the agent's use cases over them, between the command line
// (cmd/cfe-agent, which parses flags into Options and wires the adapters)
// and the adapters and domain below it.
//
// It holds what the running agent does besides serving HTTP: the outbox's
// deliverer, backups and their schedule, printing's wiring, the printer
// listing, the state the local module reports, diagnostics, and the run
// file and live-agent lookup that one-shot commands use to find a running
// agent.
//
// app imports the domain (cfe), the use cases (issuer, printing), the
// adapters it composes and the wire types of the state report
// (localapi/apitype); it never imports the HTTP server (localapi) nor the
// command line, which import it.
package app
