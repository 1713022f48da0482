package signer

import (
	"errors"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Causes carried in the Err field of the *cfe.Error values this package
// returns, for callers that need to tell them apart with errors.Is.
var (
	// ErrNotSigned: the document has no Signature as the last child of its root.
	ErrNotSigned = errors.New("document has no enveloped signature")
	// ErrDigestMismatch: the signed content was changed after signing.
	ErrDigestMismatch = errors.New("digest does not match the signed content")
	// ErrBadSignature: SignatureValue was not made by the certificate's key.
	ErrBadSignature = errors.New("signature value does not verify")
	// ErrWrongPassword: the PKCS#12 password is not the file's.
	ErrWrongPassword = errors.New("incorrect PKCS#12 password")
	// ErrCertificateExpired: the signing certificate is outside its validity.
	ErrCertificateExpired = errors.New("certificate outside its validity period")
	// ErrUntrusted: the certificate does not chain to a trusted certification
	// authority.
	ErrUntrusted = errors.New("certificate does not chain to a trusted authority")
)

// invalid returns an EINVALID error with a Spanish message for the user and
// the cause, if any, for logs and errors.Is (nil when msg already says it all).
func invalid(op, msg string, cause error) *cfe.Error {
	return &cfe.Error{Code: cfe.EINVALID, Op: op, Message: msg, Err: cause}
}
