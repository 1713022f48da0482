// Package issuer is the use case of signing a CFE offline: validate the request,
// check the machine's time zone, reserve the next number of a CAE range, build
// DGI's XML, sign it, compute the security code and QR data, and commit the
// number, the signed CFE, its uuid record and its outbox entry in one durable
// transaction. A failure anywhere before the commit consumes nothing.
//
// It depends only on cfe and on the one-method needs it declares (Signer).
package issuer
