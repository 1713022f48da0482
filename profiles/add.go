package profiles

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/durable"
)

// Add adds the profile called name to dataDir/config.yaml and, when
// activate is set, makes it the active one. The rest of the file, comments
// included, stays as it was. Only the profile's fields that are set are
// written: the others take the defaults Load fills in (the tax values, the
// listen address, the warnings…). Errors: ENOTFOUND when config.yaml does
// not exist; ECONFLICT when a profile of that name exists; EINVALID when the
// name or the profile breaks a rule (each field named; nothing is written);
// any other error is internal.
func Add(dataDir, name string, p Profile, activate bool) error {
	const op = "profiles.Add"
	name = strings.ToLower(name)
	cfg, _, err := read(op, dataDir, nil)
	if err != nil {
		return err
	}
	if _, ok := cfg.Profile(name); ok {
		return &cfe.Error{Code: cfe.ECONFLICT, Op: op, Message: fmt.Sprintf("ya existe un perfil %q", name)}
	}
	if !nameRule.MatchString(name) {
		return invalid(op, []cfe.FieldError{{Campo: "profiles." + name, Mensaje: "nombre de perfil inválido: " + nameRuleText}})
	}
	value, err := setFields(p)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	path := filepath.Join(dataDir, FileName)
	raw, err := durable.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := addProfileNode(&doc, name, value); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if activate {
		if err := setActive(&doc, name); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("%s: encoding: %w", op, err)
	}
	// The new file must load as it will be read: with the defaults filled
	// in and every rule checked. It is read from a private copy first.
	if err := checkFile(op, buf.Bytes()); err != nil {
		return err
	}
	if err := durable.WriteFile(path, buf.Bytes(), true); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// setFields is the YAML of p without its unset fields (empty strings, zero
// numbers, false, empty lists and maps), so that Load's defaults apply to
// them.
func setFields(p Profile) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(p); err != nil {
		return nil, err
	}
	prune(&n)
	return &n, nil
}

// prune removes unset values from a mapping node, recursively; it reports
// whether n itself is unset.
func prune(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.MappingNode:
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			if !prune(n.Content[i+1]) {
				kept = append(kept, n.Content[i], n.Content[i+1])
			}
		}
		n.Content = kept
		return len(n.Content) == 0
	case yaml.SequenceNode:
		return len(n.Content) == 0
	case yaml.ScalarNode:
		switch n.Value {
		case "", "0", "false", "0s", "0000-00-00":
			return true
		}
	}
	return false
}

// addProfileNode adds name: value under the document's "profiles" mapping.
func addProfileNode(doc *yaml.Node, name string, value *yaml.Node) error {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("config.yaml is not a mapping")
	}
	root := doc.Content[0]
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if strings.EqualFold(root.Content[i].Value, "profiles") && root.Content[i+1].Kind == yaml.MappingNode {
			root.Content[i+1].Content = append(root.Content[i+1].Content, key, value)
			return nil
		}
	}
	profiles := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{key, value}}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "profiles"}, profiles)
	return nil
}

// checkFile reads a candidate config.yaml as Load would (without the
// environment's overrides) and validates it.
func checkFile(op string, content []byte) error {
	dir, err := os.MkdirTemp("", "cfe-agent-config-")
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, FileName), content, 0o600); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	cfg, unknown, err := read(op, dir, nil)
	if err != nil {
		return err
	}
	return cfg.validate(op, unknown...)
}
