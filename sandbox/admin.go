package sandbox

import (
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
)

// Admin edits the data of an environment from the command line, while no
// server holds its file.
type Admin struct {
	db     *data.DB
	prefix string
}

// OpenAdmin opens the data file of environment env in dataDir.
func OpenAdmin(dataDir, env string) (*Admin, error) {
	prefix, _, err := auth.KeyPrefixes(env)
	if err != nil {
		return nil, err
	}
	d, err := data.Open(dataDir, env)
	if err != nil {
		return nil, err
	}
	return &Admin{db: d, prefix: prefix}, nil
}

// Close closes the data file.
func (a *Admin) Close() error { return a.db.Close() }

// AddCompany adds a company; ECONFLICT when its RUC exists. It returns the
// new company's id.
func (a *Admin) AddCompany(c SeedCompany) (int64, error) {
	var id int64
	err := a.db.Update(func(tx *bolt.Tx) error {
		rec, err := seeder{tx: tx, prefix: a.prefix}.company(c)
		if err == nil {
			id = rec.ID
		}
		return err
	})
	return id, err
}

// AddUser adds a user of the companies named by RUC; ECONFLICT when the
// username exists. It returns the new user's id.
func (a *Admin) AddUser(u SeedUser) (int64, error) {
	var id int64
	err := a.db.Update(func(tx *bolt.Tx) error {
		rec, err := seeder{tx: tx, prefix: a.prefix, cost: auth.PasswordCost}.user(u)
		if err == nil {
			id = rec.ID
		}
		return err
	})
	return id, err
}
