package assets

import (
	"embed"
	"io/fs"
	"path"
)

//go:embed roots/*.pem
var rootsFS embed.FS

// CA is the public certificate of a certification authority compiled into the
// binary, for checking who signed a document (roots/SOURCE.md says where each
// one comes from).
type CA struct {
	File string // name under roots/
	PEM  []byte // the certificate; shared, never to be modified
	// Anchor marks a certificate trusted by itself: a chain that reaches it
	// is trusted. The others are intermediate CAs that only link a signer's
	// certificate to an anchor, and must themselves chain to one.
	Anchor bool
}

// caRoles says which embedded certificates are anchors. Every file under
// roots/ must be listed (TestCAs_ListedAndDocumented).
var caRoles = map[string]bool{
	// Uruguay's national root (AGESIC/UCE), self-signed: the accredited
	// providers (Correo Uruguayo, Abitab, ...) chain to it.
	"acrn.pem": true,
	// Correo Uruguayo's CA under the national root, issuer of DGI's and
	// companies' certificates since 2014.
	"correo-uruguayo-ca-2013.pem": false,
	// Correo Uruguayo's first CA (issuer of the certificates in DGI's 2012 to
	// 2016 samples). Its issuer, "Correo Uruguayo - Root CA", could not be
	// found from a verifiable source, so this CA is the anchor of its chain.
	"correo-uruguayo-ca-2008.pem": true,
}

// CAs returns the certification authorities for Uruguayan e-invoicing
// certificates that the binary carries, in file name order.
func CAs() ([]CA, error) {
	entries, err := fs.ReadDir(rootsFS, "roots")
	if err != nil {
		return nil, err
	}
	var cas []CA
	for _, e := range entries {
		b, err := rootsFS.ReadFile(path.Join("roots", e.Name()))
		if err != nil {
			return nil, err
		}
		cas = append(cas, CA{File: e.Name(), PEM: b, Anchor: caRoles[e.Name()]})
	}
	return cas, nil
}
