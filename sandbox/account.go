package sandbox

import (
	"github.com/gorilla/mux"
)

// registerAccountRoutes registers the web account area (interface §5.2) and
// the chart data its dashboard draws.
func (s *Server) registerAccountRoutes(r *mux.Router) {
	s.registerChartRoutes(r)
}
