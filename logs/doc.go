// Package logs owns the agent's log: structured records (log/slog, text
// format) written both to stderr and to a size-rotated file in the data
// directory (logs/cfe-agent.log, rotated by lumberjack), with secrets
// redacted before any record is written.
//
// A Redactor hides secrets two ways: attributes whose key names a secret
// (password, secret, token, api_key, authorization, ...) are replaced
// whatever their value, and every known secret value (the profile's API keys,
// certificate password and LAN tokens, set with SetSecrets) is cut out of any
// message or attribute that contains it, errors included.
package logs
