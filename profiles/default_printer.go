package profiles

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// SetDefaultPrinter makes alias the default printer of the profile called
// name in dataDir/config.yaml. Like Use, only that key changes: the rest of
// the file, comments included, stays as it was, and environment overrides
// play no part. Errors: ENOTFOUND when config.yaml, the profile or the printer
// does not exist; EINVALID when the file breaks a rule of Validate (nothing is
// written); any other error is internal.
func SetDefaultPrinter(dataDir, name, alias string) error {
	const op = "profiles.SetDefaultPrinter"
	cfg, unknown, err := read(op, dataDir, nil)
	if err != nil {
		return err
	}
	name, alias = strings.ToLower(name), strings.ToLower(alias)
	p, ok := cfg.Profile(name)
	if !ok {
		return &cfe.Error{Code: cfe.ENOTFOUND, Op: op, Message: fmt.Sprintf("el perfil %q no existe", name)}
	}
	if _, ok := p.Printers[alias]; !ok {
		return &cfe.Error{Code: cfe.ENOTFOUND, Op: op, Message: fmt.Sprintf("la impresora %q no existe en el perfil %q (impresoras: %s)",
			alias, name, strings.Join(slices.Sorted(maps.Keys(p.Printers)), ", "))}
	}
	p.DefaultPrinter = alias
	cfg.Profiles[name] = p
	if err := cfg.validate(op, unknown...); err != nil {
		return err
	}

	return editFile(op, dataDir, func(doc *yaml.Node) error {
		if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
			return errors.New("config.yaml is not a mapping")
		}
		profile := mappingValue(mappingValue(doc.Content[0], "profiles"), name)
		if profile == nil {
			return errors.New("config.yaml has no mapping for the profile")
		}
		setMappingValue(profile, "default_printer", alias)
		return nil
	})
}

// mappingValue returns the value of key (case-insensitive) in the mapping
// node m, or nil when m is not a mapping or has no such key.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if strings.EqualFold(m.Content[i].Value, key) {
			return m.Content[i+1]
		}
	}
	return nil
}

// setMappingValue sets key to the string value in the mapping node m, keeping
// the comments of the old value, or appends the key when m has none.
func setMappingValue(m *yaml.Node, key, value string) {
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if strings.EqualFold(m.Content[i].Value, key) {
			v.HeadComment, v.LineComment = m.Content[i+1].HeadComment, m.Content[i+1].LineComment
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}
