// Package store is the agent's durable memory: one bbolt file per profile and
// environment holding the CAE ranges, the number counters, every signed CFE,
// the outbox toward the hosted service and an append-only audit log.
//
// # Numbering
//
// DB implements cfe.IssueStore. Its promise is that, for every (type, serie),
// the numbers committed to disk form one gap-free sequence at every instant,
// including after a SIGKILL or a power cut, and that no number is ever stored
// twice:
//
//   - Reserve hands out numbers in memory only. Within a serie it hands out the
//     lowest number that is still free, so a released number is handed out
//     again before anything higher. Across series it prefers a serie with a
//     released number to refill, then the range that expires first, then the
//     lowest serie, then the lowest DNro.
//   - Commit queues the signed CFE. A single committer goroutine writes queued
//     CFEs in number order: a CFE is written only in the same group as, or
//     after, every lower number of its serie. A group goes to the commit log
//     (wal.go) in one write with one fdatasync before Commit returns; the
//     checkpoints then write everything a CFE needs (counter, record,
//     indexes, outbox entry, audit event) into bbolt, many CFEs per
//     transaction, in log order. Until then the logged CFEs are found by
//     FindByUUID and FindByNumber, and every other read or write of the store
//     checkpoints them first, so nothing reads or writes bbolt as if an
//     acknowledged CFE were not there. Open replays what a crash left in the
//     log. The committer's checks see bbolt and the logged CFEs together.
//   - Group commit: while one group is being flushed, new commits queue up;
//     the committer then logs all of them that are ready in the next group.
//     Batches grow with concurrency. A lone caller never waits for others;
//     while more CFEs are in progress than processors, ready ones may be held
//     back up to Options.MaxBatchDelay to share a group with those still
//     being signed (the processors have signing to do meanwhile, and each
//     group saved is a flush saved; Options.DisableHoldBack turns this off). A CFE that fails its own checks (uuid conflict, range expired...)
//     fails alone; it does not fail the others of its batch, although the
//     higher numbers of its own serie must then wait, as below.
//   - Commit notification: once a group of signed CFEs is on disk (in the
//     commit log), and before their callers are answered, the store wakes every
//     watcher (WatchCommits: a channel each, one value at most waiting) and
//     counts them (Committed). The outbox's deliverer and the backup
//     schedule's every_n listen to it: whoever signs, they hear of it; a
//     replayed or refused request commits nothing and wakes no one
//     (notify.go).
//   - Released numbers: when a reserved number is released (its request failed)
//     while higher numbers of the serie wait to be committed, those commits wait
//     for a new reservation to take the released number and commit it. If no one
//     does within Options.ReclaimTimeout, they fail with a retryable
//     EUNAVAILABLE and give their numbers back, so the counter rolls back and the
//     next reservations start again right after the last committed number.
//     A reservation that is neither committed nor released within
//     Options.ReservationTimeout is taken back the same way, so a lost caller
//     cannot block its serie.
//
// After Commit returns, the reservation is finished whatever the outcome: the
// number is stored on success and given back on failure. Release after Commit
// is a harmless no-op, so callers may simply defer Release.
//
// # Knowing where numbering stands
//
// The file alone cannot tell that it was deleted, truncated or replaced by an
// older copy. With Options.Journal, a small journal outside the file bounds
// every committed number (written once per block of numbers, and exactly at
// Close); Open raises the counters of a file found behind it. Without a
// journal, Options.HoldWithoutJournal holds numbering until ResumeNumbering
// (the hosted service's last numbers) or MarkUsedElsewhere settles it. Open
// also refuses a file shorter than its own meta page says (bbolt would die
// of SIGBUS on it). See journal.go, hold.go, precheck.go and
// docs/numbering.md.
//
// The journal lives in the data directory, so a copy of the whole data
// directory put back carries an old journal that cannot tell it is old.
// Options.Witness keeps, outside the data directory and per machine, a copy
// of the journal's marks and of its generation (a count of its writes),
// written after every journal write (witness.go): Open finds a journal or
// store behind it, and holds the series it is behind on until
// ResumeNumbering or MarkUsedElsewhere settles them at or above the
// witness's marks; a data directory with neither journal nor numbers
// resumes above them. The witness never stops signing: one that cannot be
// read is set aside, one that cannot be written is reported
// (WitnessStatus).
//
// # A damaged file
//
// bbolt trusts its file: a zeroed or overwritten page makes it panic, an
// offset pointing outside the file makes the process fault, a page that is
// its own ancestor makes it loop. Open therefore walks the whole page tree
// with plain reads under a shared lock before bbolt opens the file for
// writing (checkTree, precheck.go), and every transaction, at Open and after,
// runs under a guard that turns a panic or a fault into an error
// (damage.go). A damaged file is refused with a Spanish *cfe.Error naming it
// and saying what to do (errors.Is ErrDamaged); a damage met after Open
// marks the DB broken (DB.Damaged): every later operation answers that error
// and bbolt is not used again.
//
// That whole-file check reads every page, so its time grows with the file
// (32 s at 3 M CFEs). It runs at start only when something may have written
// the file since a check proved it whole (verified.go): a clean Close of a
// file proved whole writes a record beside it (VerifiedPath: size,
// modification time, SHA-256 of both meta pages, the outbox's and the
// rejected list's sizes), and Open removes it before anything writes the
// file. When the record matches the file, Open checks at start only what
// opening reads (the size against the meta page, the meta pages, the root
// page and the freelist, bbolt's own open, the small buckets Open loads, all
// under the guard) and runs the whole check in the background, in one read
// transaction; a damage it finds marks the DB broken as above, so commits
// are refused with the damaged error from then on. A crash, a power cut, a
// Close before the background check ended, or any write since the record
// leave no matching record, and the next Open checks the whole file first.
//
// # A record that cannot be read back
//
// A value damaged inside a whole page tree (a bit flipped in a compressed XML
// or a JSON record) passes the checks above, which read pages, not what values
// mean. readRecord (quarantine.go) checks every read of a stored CFE: a
// damaged one answers a Spanish error naming it (ErrRecordDamaged) without
// marking the DB broken, PendingOutbox moves it to a durable quarantine and
// goes on in commit order past it, and Repair (repair.go) puts it back from a
// backup or the hosted service's copy after checking that the copy is the
// same CFE. Its number stays used and its record is never deleted.
//
// # Power cuts
//
// A commit is acknowledged after the commit log's fdatasync, so a power cut
// keeps it: the log's records carry a CRC-32C and their sequence number, and
// Open replays every whole record bbolt lacks, stopping at a torn one (which
// no caller was told about). bbolt's own transactions (the checkpoints, every
// other write) keep its two fdatasyncs. What bbolt leaves out, Open adds: it syncs the folders holding the file
// (a new file's name is durable only with its folder), and it makes again a
// file whose creation a power cut interrupted (unfinished.go) instead of
// refusing it. The numbering journal is written with durable, whose
// new folders appear with the journal already in them. The issuer's
// TestIssuer_PowerCut replays the disk states a power cut can leave
// (internal/powercut, docs/numbering.md "Power cuts").
//
// # Encoding
//
// Records are JSON with explicit field names owned by this package (see
// records.go), never the Go field names of the domain types: a renamed domain
// field cannot silently change what is on disk. JSON keeps the file readable
// with the bbolt command-line tool, tolerates added fields, and carries
// decimal amounts as exact strings. The signed XML is the exception: it is
// stored apart from its record, in an append-only bucket, compressed with
// zstd and a dictionary made of one of the file's own CFEs, with a CRC-32C
// of the signed bytes that every read checks (xmlcodec.go): a read returns
// the exact signed bytes or an error. The file carries a schema version
// (meta bucket); Open refuses a file written by a newer schema and migrates
// an older one (migrate.go: schema 1 kept the XML in the record, schema 2
// uncompressed).
//
// Buckets: meta (schema version), ranges (by range ID), counters (last
// committed number by type and serie), cfes (by uuid; this record is also the
// idempotency entry: it holds the request hash, the number and the commit
// sequence), xml (commit sequence → the compressed signed XML), by_number
// (type/serie/number → uuid), by_time (signature time in Montevideo, then
// type/serie/number → uuid), outbox (commit sequence → pending delivery),
// rejected (deliveries the hosted service refused for good), quarantine
// (commit sequence → a pending CFE that cannot be read back) and audit
// (sequence → JSON event); annulled (type/serie/first number → a run of
// annulled numbers, annulled.go) and rates (currency/day → a BCU quote,
// rates.go) are made by their first write.
//
// # Annulled numbers
//
// A number the agent skips (the journal's block after a lost store, a
// restore's bound, cae used-elsewhere) or a technician voids (AnnulNumbers)
// is recorded in the annulled bucket with its reason and the day whose daily
// report counts it, in the transaction that skips it, and Reserve never hands
// it out: "gap-free" above means every number of a serie up to its counter is
// stored or annulled. Annulled lists them with DGI's rejections for the daily
// report (docs/reporte-diario.md).
//
// # Years of CFEs
//
// Archive moves the delivered CFEs of previous years to one read-only file
// per year beside the store (archive.go); lookups, lists, counts and range
// status read them too, so the live file holds about a year. BulkLoad
// commits many signed CFEs in one transaction through Commit's own checks
// and writes, for the scale tool (internal/scalefill).
//
// On ext4 and XFS the committer keeps some written zeros in the file past the
// data (headroom.go), so that commits overwrite allocated blocks instead of
// filling the hole bbolt leaves when it grows the file; the file is therefore
// up to a few MiB larger than its data (Options.DisableHeadroom turns this
// off). It relies on bbolt's grow leaving alone a file already large enough,
// which TestHeadroom_BboltKeepsALargeEnoughFile pins.
//
// bbolt reads the file through a memory mapping, and a fast start maps room
// past the data so that commits need not wait for the background check's
// read transaction to grow it. On Linux the mapping costs no disk: the room
// is the recorded size + 256 MiB. On Windows bbolt makes the file as large as
// its mapping and never shrinks it (there is no headroom there), so the room
// is asked from the data's end instead (an eighth of the data, between 16 MiB
// and 256 MiB): a restart without new data leaves the file's size as it was,
// the file grows only with the data, and after the lock Open compares only
// the record's meta pages, since bbolt's open rewrote the file's end
// (mapping.go; TestOpen_Restarts, with bbolt's Windows mapping emulated on
// Linux and for real under Wine).
//
// # Backups
//
// Backup copies the file inside one read transaction while commits go on,
// with a record of that instant (counts, counters, the journal's marks, the
// file's identity and lineage) inside the copy, verified before the copy
// takes its name: every record, each CFE's signed XML against its checksum,
// its record and its signature (RecordChecks), and the counters, indexes
// and outbox against the CFEs (backupcheck.go). Restore puts a backup back
// with the same checks and Open's numbering checks: it refuses a backup of
// another data directory's store unless a technician names it (lineage.go),
// one whose CFEs differ from the hosted service's under the same numbers,
// and one behind what was used unless a technician confirms the numbers
// used since (backup.go, restore.go, restorecheck.go, docs/numbering.md
// "Backups and restore").
//
// # Disk
//
// A commit that fails (disk full, read-only, I/O error in the commit log; the
// numbering journal's write counts) fails every CFE of its batch with a
// retryable EUNAVAILABLE carrying RespErrorInterno and a Spanish message that
// says why and that no number was consumed. WriteHealth remembers that
// failure until a commit succeeds, and FreeSpace reads the free space of the
// store's filesystem (writehealth.go, diskspace_*.go): the agent's /health
// reports both. A checkpoint that fails is recorded there too; the CFEs it
// could not write stay durable in the commit log, found by their lookups,
// and are written by the next checkpoint that succeeds or by the next Open.
package store
