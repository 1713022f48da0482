// Package localapi is the agent's local REST module: the HTTP server that
// point-of-sale software on the same machine (or, in LAN mode, on the shop's
// network) calls to sign CFEs and to read the agent's state, and a Go client
// for it.
//
// It owns the routes and their JSON shapes (GET /health, GET /state, GET /,
// POST /sign-cfe, POST /pdf, GET /printers, and POST /backup for this
// machine's administrator only: backup.go), their description (openapi.json,
// OpenAPI 3.1, served at GET /openapi.json and rendered as a reference page at
// GET /docs: see OpenAPI), the proxy that forwards every other /api/v1/...
// and /api/auth/... request to the hosted service (proxy.go: streaming, status
// and headers kept, the profile's credentials added only to the point-of-sale
// operations of proxy_routes.go that carry none, credential management and
// unknown routes forwarded only with the caller's own credentials, LAN tokens
// and local headers never forwarded, 502/504 when the service does not answer), the one table from cfe error codes to HTTP statuses, and the
// security rules every request passes before it reaches a route, in this
// order:
//
//  1. Host: the Host header must name this listener (127.0.0.1, localhost,
//     [::1], the configured IP, a local interface address when listening on
//     every interface, or a declared name); otherwise 403. This defeats DNS
//     rebinding: a browser page can point a name at 127.0.0.1 but cannot make
//     it send one of these Host values.
//  2. Origin: a request whose Origin is neither an allowed origin nor this
//     module itself gets 403. Allowed origins, and only they, get CORS headers
//     (never "*"), preflight answers and, when asked, private network access.
//     A request a browser made on behalf of another page (Sec-Fetch-Site
//     "cross-site", or "same-site", which includes every other port of the
//     same host) also gets 403 unless its Origin is an allowed origin, on
//     every route, GET included: an <img> or a no-cors fetch carries no
//     Origin and would otherwise spend the profile's hosted credentials.
//     Requests without the header (native clients), the user's own
//     navigations ("none") and the module's pages ("same-origin") pass.
//  3. Body: requests that carry a body (POST) must be application/json in
//     UTF-8 (415 otherwise, which defeats text/plain and form CSRF) and no
//     larger than the body limit (413). The one exception is the forwarded
//     POST /api/v1/comprobante/anular, whose hosted contract is a form
//     (application/x-www-form-urlencoded); the Origin rule still guards it.
//  4. Caller: loopback callers need no credentials. Callers from other
//     addresses are refused with 403 unless LAN mode is enabled; with LAN
//     mode they must present one of the per-terminal tokens, as
//     "Authorization: Bearer <token>" or "X-CFE-Token: <token>", compared in
//     constant time (401 otherwise). Wrong or missing tokens are counted
//     per address (10 without pause, then one try every 6 s), per IPv4 /24
//     or IPv6 /64 (30, then one every 2 s) and over all LAN callers (60,
//     then one a second: the ceiling). A caller held by a tier out of tries
//     is answered 429 with Retry-After, whatever it presents: a right token
//     waits too, or throttling would not slow a guesser down. The prefix
//     tier and the ceiling hold only callers that have not presented a
//     valid token in the last 24 hours (the other addresses of such a
//     caller's prefix are free of the ceiling), so a guesser's many sources
//     do not stop the shop's terminals (lanthrottle.go, internal/throttle).
//
// Every response carries X-Content-Type-Options: nosniff, Cache-Control:
// no-store and an X-Request-Id (the caller's, when it sent a well-formed one).
// Every request is logged with that id; tokens, Authorization headers and
// bodies never reach the log. GET routes have no side effects.
//
// The package depends on cfe, the types of the use cases it serves (issuer,
// printing) and its own wire types (localapi/apitype, which the client and
// the tray read without linking this server). What it needs from the rest of
// the agent comes through the interfaces it declares (Issuer, StateSource,
// Printing, PrinterList, StatusView, Backups, Repairs): the application's
// facade (app.Facade) implements them and cmd/cfe-agent wires it in. It
// builds no report and knows no store: GET /health and GET /state encode the
// report the application builds, and the status page (NewStatusPage)
// renders the view the application writes out.
//
// /health's status is the worst of the report's checks (the health package):
// "error" when the agent cannot sign (time zone, certificate,
// no CAE numbers, numbering held, the store's last commit failed, under
// 20 MB free on the store's disk), "degraded" when something needs attention
// soon (expiries, outbox backlog, hosted service, the disk's free space
// running low), each with its Spanish reason in warnings.
package localapi
