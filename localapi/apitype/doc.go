// Package apitype holds the types of the local module's wire: the JSON
// bodies its server writes (state report, health, errors, signing, printers,
// backups) and the requests it reads, and the header names a client needs.
// The server (localapi), its client (localapi/localclient), the health
// assessment (health), the tray and the agent's commands share them, as
// tailscale's ipnstate is shared: a program that only reads the state links
// these types, never the server.
//
// It holds types and constants only, and imports nothing of the project but
// cfe. Changing a field's name or tag changes the wire: the OpenAPI
// description and its tests must follow.
package apitype
