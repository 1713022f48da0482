// Package account is the emulator's web account area (interface §5.2): the
// static pages under /cuenta/, embedded in the binary, in Spanish, without
// outside resources, served with a strict Content-Security-Policy. The page's
// script uses the public API with the user's JWT, kept in the tab's
// sessionStorage (docs/sandbox.md says why not a cookie session); the chart
// data it draws are the reports room's.
package account
