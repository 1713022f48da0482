// Package httpcode is the HTTP edge of cfe's error codes: the one mapping
// between a cfe.Error's code and an HTTP status, in both directions. Status
// is the servers' side (localapi answers a code with its status); Code is the
// clients' side (hosted and localapi/localclient read a peer's status back as
// a code). The two are one table: a code the local module answers with reads
// back as the same code.
//
// cfe keeps the codes and knows nothing of HTTP.
package httpcode

import (
	"net/http"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// codeStatus is the status each code is answered with.
var codeStatus = map[string]int{
	cfe.EINVALID:      http.StatusBadRequest,
	cfe.ENOTFOUND:     http.StatusNotFound,
	cfe.ECONFLICT:     http.StatusConflict,
	cfe.EUNAUTHORIZED: http.StatusUnauthorized,
	cfe.EFORBIDDEN:    http.StatusForbidden,
	cfe.EUNAVAILABLE:  http.StatusServiceUnavailable,
	cfe.EINTERNAL:     http.StatusInternalServerError,
}

// statusCode is the code of each HTTP error status that has its own. The
// other statuses are read by Code's ranges.
var statusCode = map[int]string{
	http.StatusBadRequest:            cfe.EINVALID,
	http.StatusRequestEntityTooLarge: cfe.EINVALID,
	http.StatusUnauthorized:          cfe.EUNAUTHORIZED,
	http.StatusForbidden:             cfe.EFORBIDDEN,
	http.StatusNotFound:              cfe.ENOTFOUND,
	http.StatusConflict:              cfe.ECONFLICT,
	http.StatusTooManyRequests:       cfe.EUNAVAILABLE,
	http.StatusInternalServerError:   cfe.EINTERNAL,
}

// Status returns the HTTP status an error of code is answered with; a code
// that is none of cfe's (an empty one included) is an internal error, 500.
func Status(code string) int {
	if st, ok := codeStatus[code]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// Code returns the code of an error a peer answered with the HTTP status
// status, as the clients of the hosted service and of the local module read
// it: a 429 or a 5xx other than 500 means "not now" (EUNAVAILABLE), another
// 4xx EINVALID, anything else EINTERNAL.
func Code(status int) string {
	if code, ok := statusCode[status]; ok {
		return code
	}
	switch {
	case status >= 500:
		return cfe.EUNAVAILABLE
	case status >= 400:
		return cfe.EINVALID
	}
	return cfe.EINTERNAL
}
