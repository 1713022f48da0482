package apitype

// Headers of the local module that its clients send or read.
const (
	// HeaderRequestID carries the request's id, in answers and, when the
	// client chose one, in requests.
	HeaderRequestID = "X-Request-Id"
	// HeaderAdmin carries the running agent's admin token (POST /backup).
	HeaderAdmin = "X-CFE-Admin"
)
