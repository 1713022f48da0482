package profiles

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/durable"
)

// defaultYAML is the commented configuration written on first run.
//
//go:embed default.yaml
var defaultYAML []byte

// The configuration holds secrets: durable.WriteFile gives it mode 0600 and
// its directory 0700.

// EnsureDefault writes the default configuration (one sandbox profile with
// DGI's test company) to dataDir/config.yaml when that file does not exist,
// creating dataDir, then loads the configuration. created reports whether the
// file was written; an existing file is never overwritten, not even by a
// concurrent call. An existing file is only read: nothing is written, so a
// full or read-only disk does not keep the agent from loading it. Errors are
// those of Load.
func EnsureDefault(dataDir string) (cfg *Config, created bool, err error) {
	return EnsureDefaultWith(dataDir, Overrides{})
}

// EnsureDefaultWith is EnsureDefault loading with the command line's
// overrides (LoadWith).
func EnsureDefaultWith(dataDir string, o Overrides) (cfg *Config, created bool, err error) {
	const op = "profiles.EnsureDefault"
	if _, err := os.Lstat(filepath.Join(dataDir, FileName)); err == nil {
		cfg, err = LoadWith(dataDir, o)
		return cfg, false, err
	}
	switch err := durable.WriteFile(filepath.Join(dataDir, FileName), defaultYAML, false); {
	case err == nil:
		created = true
	case !errors.Is(err, fs.ErrExist):
		return nil, false, fmt.Errorf("%s: %w", op, err)
	}
	cfg, err = LoadWith(dataDir, o)
	return cfg, created, err
}

// Save validates cfg and writes it to dataDir/config.yaml atomically: the
// file is either the old one or the new one, never a mix. Comments in the old
// file are not kept. cfg is written as given; note that a Config from Load
// carries the environment overrides. Errors: EINVALID when cfg breaks a rule of
// Validate (nothing is written); any other error is internal.
func Save(dataDir string, cfg *Config) error {
	const op = "profiles.Save"
	if err := cfg.validate(op); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(cfg); err != nil {
		return fmt.Errorf("%s: encoding: %w", op, err)
	}
	if err := durable.WriteFile(filepath.Join(dataDir, FileName), buf.Bytes(), true); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// Use makes the profile called name the active one in dataDir/config.yaml.
// Only the "active" key changes: the rest of the file, comments included,
// stays as it was. Environment overrides play no part. Errors: ENOTFOUND when
// config.yaml or the profile does not exist; EINVALID when the file, with the
// new active profile, breaks a rule of Validate (nothing is written); any
// other error is internal.
func Use(dataDir, name string) error {
	const op = "profiles.Use"
	cfg, unknown, err := read(op, dataDir, nil)
	if err != nil {
		return err
	}
	name = strings.ToLower(name)
	if _, ok := cfg.Profile(name); !ok {
		return &cfe.Error{Code: cfe.ENOTFOUND, Op: op, Message: fmt.Sprintf("el perfil %q no existe (perfiles: %s)",
			name, strings.Join(slices.Sorted(maps.Keys(cfg.Profiles)), ", "))}
	}
	cfg.Active = name
	if err := cfg.validate(op, unknown...); err != nil {
		return err
	}

	return editFile(op, dataDir, func(doc *yaml.Node) error { return setActive(doc, name) })
}

// editFile applies edit to the YAML tree of dataDir/config.yaml and writes the
// file back atomically, keeping its comments and the order of its keys.
func editFile(op, dataDir string, edit func(doc *yaml.Node) error) error {
	path := filepath.Join(dataDir, FileName)
	raw, err := durable.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := edit(&doc); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("%s: encoding: %w", op, err)
	}
	if err := durable.WriteFile(path, buf.Bytes(), true); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// setActive sets the top-level "active" key of a YAML document, adding it
// first when the document has none.
func setActive(doc *yaml.Node, name string) error {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return errors.New("config.yaml is not a mapping")
	}
	root := doc.Content[0]
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if strings.EqualFold(root.Content[i].Value, "active") {
			value.HeadComment, value.LineComment = root.Content[i+1].HeadComment, root.Content[i+1].LineComment
			root.Content[i+1] = value
			return nil
		}
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "active"}
	root.Content = append([]*yaml.Node{key, value}, root.Content...)
	return nil
}
