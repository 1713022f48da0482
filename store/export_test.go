package store

// Transactions returns how many commit transactions db has written, so tests
// and benchmarks can see group commit at work.
func Transactions(db *DB) uint64 { return db.transactions.Load() }
