// Package profiles owns the agent's configuration: the file config.yaml in the
// data directory, which holds named profiles and the active one.
//
// A profile says everything one agent needs to run for one company in one
// environment: the environment (produccion or sandbox), the issuing company
// (mappable to cfe.Emisor), the issuing point, the local listen address and
// its LAN and browser rules, the signing certificate, the CAE files and
// warnings, the tax values, the printers and print templates, and the hosted
// service's address and credentials.
//
// Load reads the file with its own viper instance (never viper's global),
// applies environment overrides for the active profile (one prefix,
// CFE_AGENT_), fills defaults and validates every profile, naming the profile
// and field of each broken rule in Spanish. LoadWith also applies the command
// line's Overrides (--profile, --listen) above the environment, so a value
// given by flag obeys the same rules as one in the file, without going
// through the process environment. EnsureDefault writes the embedded,
// commented default file on first run; Save writes atomically; Use switches the
// active profile; Add adds a profile keeping the file's comments; Redacted
// hides every secret for diagnostics.
//
// Names of profiles, printers and templates are case-insensitive: viper folds
// keys to lower case, so the package validates and looks them up in lower case.
// Paths in a profile may be relative; Profile.Resolve makes them absolute
// against the data directory. No viper type escapes the package.
package profiles
