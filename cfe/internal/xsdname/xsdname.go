// Package xsdname holds what the two readers of DGI's schemas,
// cfe/internal/xsdgen and cfe/xsdvalid, must read alike: the QName values of
// XML Schema attributes (type, base, ref, ...), resolved against the
// namespace declarations in scope, and the xs:pattern values Go's regexp
// can check with XSD's meaning.
package xsdname

import (
	"strings"

	"github.com/beevik/etree"
)

// nsXML is the namespace the xml prefix is bound to without a declaration.
const nsXML = "http://www.w3.org/XML/1998/namespace"

// Resolve resolves the QName v written in el's scope to its namespace and
// local name. An unprefixed name takes the default namespace in scope (""
// when none). ok is false when v's prefix is declared nowhere in scope;
// space is "" then.
func Resolve(el *etree.Element, v string) (space, local string, ok bool) {
	prefix, local, found := strings.Cut(v, ":")
	if !found {
		prefix, local = "", v
	}
	key := "xmlns"
	if prefix != "" {
		key = "xmlns:" + prefix
	}
	for e := el; e != nil; e = e.Parent() {
		for _, a := range e.Attr {
			if a.FullKey() == key {
				return a.Value, local, true
			}
		}
	}
	switch prefix {
	case "":
		return "", local, true
	case "xml":
		return nsXML, local, true
	}
	return "", local, false
}
