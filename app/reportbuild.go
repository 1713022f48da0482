package app

import "github.com/cfe-agent/cfe-agent/dgisend"

// signedReport returns the builder of the agent's signed daily report of
// (date, SecEnvio) from its store (Reports.Signed, report.go), or why there
// is none (no usable certificate: a report is signed).
func (a *Agent) signedReport() (dgisend.BuildReport, error) {
	r, err := a.Reports()
	if err != nil {
		return nil, err
	}
	return r.Signed, nil
}
