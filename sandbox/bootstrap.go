package sandbox

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
)

// bootstrap creates the demo data on first run (with the demo company's
// certificate and CAE ranges) and applies the seed.
func (s *Server) bootstrap() error {
	prefix, _, _ := auth.KeyPrefixes(s.cfg.Environment)
	demoPassword := s.cfg.DemoPassword
	generated := false
	var demoCompany int64
	err := s.db.Update(func(tx *bolt.Tx) error {
		sd := seeder{tx: tx, prefix: prefix, cost: s.cfg.PasswordCost}
		if !data.Initialized(tx) {
			if demoPassword == "" {
				demoPassword, generated = auth.NewSecret("")[:20], true
			}
			var err error
			if demoCompany, err = sd.demo(demoPassword); err != nil {
				return fmt.Errorf("sandbox: create demo data: %w", err)
			}
			if err := data.MarkInitialized(tx); err != nil {
				return err
			}
		}
		if s.cfg.Seed != nil {
			if err := sd.apply(s.cfg.Seed, s.cfg.Now); err != nil {
				return fmt.Errorf("sandbox: seed: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if demoCompany != 0 {
		if err := s.issuing.Prepare(context.Background(), demoCompany); err != nil {
			return fmt.Errorf("sandbox: demo certificate and CAE ranges: %w", err)
		}
	}
	if generated {
		fmt.Fprintf(s.cfg.Out, "cfe-sandbox: created user %q with password %s (shown only now)\n", demoUsername, demoPassword)
	}
	return nil
}

// demo creates the demo company (with its footer data), its issuing point
// and the demo user, and returns the company's id.
func (sd seeder) demo(password string) (int64, error) {
	c, err := sd.company(SeedCompany{RUC: demoRUC, RazonSocial: demoRazonSocial, FechaEmisor: demoFechaEmisor, WebURL: demoWebURL})
	if err != nil {
		return 0, err
	}
	_, err = sd.user(SeedUser{Username: demoUsername, Email: demoEmail, Password: password, Empresas: []string{c.RUC}})
	return c.ID, err
}
