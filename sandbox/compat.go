package sandbox

import (
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

// Names of the rooms' types and values that Config, Seed and the tests of
// other packages (hosted, localapi, cmd/cfe-agent) use through this package.

// Environments (auth.EnvSandbox, auth.EnvProduccion).
const (
	EnvSandbox    = auth.EnvSandbox
	EnvProduccion = auth.EnvProduccion
)

// LoginLimits are the login-protection thresholds (auth.LoginLimits).
type LoginLimits = auth.LoginLimits

// DefaultLoginLimits are the thresholds used when Config.LoginLimits is zero.
var DefaultLoginLimits = auth.DefaultLoginLimits

// KeyFailureLimits throttle invalid API keys per client address
// (auth.KeyFailureLimits).
type KeyFailureLimits = auth.KeyFailureLimits

// DefaultKeyFailureLimits give each zero field of Config.KeyFailureLimits.
var DefaultKeyFailureLimits = auth.DefaultKeyFailureLimits

// TemplateConfig is a company's custom print template (data.TemplateConfig).
type TemplateConfig = data.TemplateConfig

// IssuedSummary is an issued CFE as buscar lists it (issuing.IssuedSummary).
type IssuedSummary = issuing.IssuedSummary
