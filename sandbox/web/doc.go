// Package web holds the emulator's HTTP conventions, shared by every room:
// the request id (X-Request-Id, echoed in error bodies), the body limit, the
// one table from error code to HTTP status, the error shapes (the common
// {error, code, details, request_id} and the PDF endpoint's {ok, error}), and
// reading JSON bodies and naming invalid fields.
//
// Internal errors are logged with the request id and shown as a generic
// message; every message a caller reads is Spanish.
package web
