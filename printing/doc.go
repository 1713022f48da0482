// Package printing is the use case behind POST /pdf: find a signed CFE in
// the local store, render its printed representation with the company's
// template, and send it to one of the profile's printers with the copies
// the profile gives for that printer and CFE type.
//
// It owns the choices between those parts — which template when the request
// names none, which copies, the watermark outside production, the facts the
// footer prints — over the pdf and printer packages and any store with
// FindByUUID and FindByNumber. It owns the use case's types (CFERef,
// Document, PrintResult): localapi imports them, as it imports issuer's, and
// its POST /pdf calls a Service through localapi.Printing (the
// application's facade, app.Facade, which the tray's reprint uses too). The
// application builds its Config from the profile.
package printing
