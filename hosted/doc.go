// Package hosted is the agent's side of the hosted CFE service: a typed HTTP
// client and the outbox deliverer.
//
// Client owns authentication (a company API key sent as X-API-Key, or a user
// login whose JWT is renewed with its refresh token before its six hours run
// out, one login at a time, and never again once the service has refused the
// credential), the mapping of the service's answers to cfe error codes with
// the service's own Spanish message, the X-RateLimit-* headers it reads, and
// retries: only of requests that are safe to repeat (GET, and POSTs that carry
// the uuid the service deduplicates on), with exponential backoff and jitter,
// and honouring Retry-After. While a key has no requests left in its window,
// the client waits for the next window instead of collecting a 429.
//
// Deliverer drains the store's outbox: it sends each CFE the agent signed
// offline to POST /api/v1/comprobante/recibirFirmado, in commit order (hence
// in number order within each type and serie), records the hosted id of an
// accepted CFE and the reason of one refused for good, and backs off while
// the service is down, refusing the credential or limiting the key. All its
// state is in the store, so it resumes after a restart where it stopped.
//
// The package depends on cfe only; the application (app) wires it to the
// store, whose commit notification wakes the deliverer (DelivererConfig.Wake),
// and cmd/cfe-agent to the local module (whose proxy uses Client.Authorize
// and Client.Observe).
package hosted
