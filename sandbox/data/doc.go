// Package data is the emulator's data file and the records its rooms share:
// one bbolt file per environment (DB, the one owner of the shared state), and
// the users, companies, company API keys, sessions, issuing points and issued
// CFEs kept in it, with their indexes.
//
// The records are plain types with the rules that concern a record alone
// (a user's companies, a key's effective limits, a company as the emitter of
// its CFEs, an issuing point's fields). What the service does with them is
// the rooms' (auth, issuing, reports, mail, dgi); a room keeps its own
// records (export configurations, e-mail sends, envelope numbers, the
// companies' test certificates) in buckets of its own, created on first use.
//
// Accessors are functions over a transaction (*bolt.Tx), so that a room reads
// and writes several kinds of record in one transaction. A missing record is
// a cfe.ENOTFOUND error naming it in Spanish ("el usuario no existe").
package data
