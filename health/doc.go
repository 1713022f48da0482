// Package health is the agent's self-assessment: from plain facts about the
// agent (State: the signing certificate, the CAE ranges and their use, the
// outbox, the recent receipts, the hosted service as last seen, a numbering
// hold, the disk, the backups) and the time, it builds the state report's
// parts and decides its status — ok, degraded (the agent signs, but
// something needs attention soon) or error (it cannot sign) — with a
// Spanish warning for every reason.
//
// The thresholds live here: a certificate expiring within 30 days, an
// outbox whose oldest CFE waits for more than an hour, free disk space under
// 200 MB or 5 % of the disk (capped at 1 GB) is degraded; under 20 MB, or a
// failed last commit, is error. A type's CAE ranges all nearly used up or
// all near their expiry degrade the status; no type with numbers left is
// error.
//
// Its functions are pure: no I/O, no clock of their own. The application
// (app.Facade.Report) fills State with the facts as their producers report
// them — range use, the certificate's summary, the outbox and the disk are
// cfe's types, filled by the store and the signer and read here as they
// are — and builds the whole report with Report; localapi encodes it as GET
// /health and GET /state, and the tray and the status page read it
// in-process. The report's types are localapi/apitype's, which embed the
// facts' types: a field added to one of them reaches /state without a copy
// here.
package health
