package cfe

import "net/http"

// httpStatusCode is the code of each HTTP error status that has its own.
var httpStatusCode = map[int]string{
	http.StatusBadRequest:            EINVALID,
	http.StatusRequestEntityTooLarge: EINVALID,
	http.StatusUnauthorized:          EUNAUTHORIZED,
	http.StatusForbidden:             EFORBIDDEN,
	http.StatusNotFound:              ENOTFOUND,
	http.StatusConflict:              ECONFLICT,
	http.StatusTooManyRequests:       EUNAVAILABLE,
	http.StatusInternalServerError:   EINTERNAL,
}

// CodeForHTTPStatus returns the code of an error a peer answered with the
// HTTP status status, as the clients of the hosted service and of the local
// module read it: a 429 or a 5xx other than 500 means "not now"
// (EUNAVAILABLE), another 4xx EINVALID, anything else EINTERNAL.
func CodeForHTTPStatus(status int) string {
	if code, ok := httpStatusCode[status]; ok {
		return code
	}
	switch {
	case status >= 500:
		return EUNAVAILABLE
	case status >= 400:
		return EINVALID
	}
	return EINTERNAL
}
