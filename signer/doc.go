// Package signer owns the XML digital signature of DGI documents and the
// material it needs: the company's key and certificate, and DGI's CAE files.
//
// Signing follows DGI's profile (Formato de los CFE, zone I; the DGI examples):
// one enveloped XML-DSig signature per document, Reference URI="", inclusive
// C14N 1.0, RSA-SHA1 by default (RSA-SHA256 as an option), an unprefixed
// Signature element in the xmldsig namespace as the last child of the root, and
// a KeyInfo carrying both X509Certificate and X509IssuerSerial. The signature is
// spliced into the caller's bytes, which are never re-serialized, so the signed
// document is the unsigned one plus the Signature element, byte for byte.
//
// Verify checks any document signed that way (a CFE, a CAE file, a daily
// report) over its own bytes, with the certificate in KeyInfo or one the caller
// names. certs.go loads PKCS#12 and PEM credentials, makes sandbox test
// certificates, reads a certificate's RUC and builds a signer's certification
// path to trusted authorities (Trust: Uruguay's national root and accredited
// CAs, which the caller supplies); cae.go reads and checks DGI's CAE files and makes sandbox ranges;
// envelope.go makes DGI envelopes of signed CFEs (every CFE verified, one certificate for all, that
// certificate in the Caratula; DGI's envelope has no signature of its own) and reads them back.
//
// This package imports only the domain package cfe among the project's packages.
package signer
