package app

import "github.com/cfe-agent/cfe-agent/dgisend"

// signedReport returns the builder of the agent's signed daily report of
// (date, SecEnvio) from its store (issue 31's report builder); nil while
// the agent has none, and then no report is sent and the days show unsent.
func (a *Agent) signedReport() dgisend.BuildReport {
	return nil
}
