package xsdvalid

import (
	"sync"

	"github.com/cfe-agent/cfe-agent/assets"
)

var dgi struct {
	sync.Mutex
	loaded map[string]*Schema
}

// DGI returns DGI's schema set whose entry file is entry (assets.SchemaCFE,
// assets.SchemaEnvelope, ...), from the XSDs the binary carries, loading it
// on first use.
func DGI(entry string) (*Schema, error) {
	dgi.Lock()
	defer dgi.Unlock()
	if s := dgi.loaded[entry]; s != nil {
		return s, nil
	}
	s, err := Load(entry, assets.ReadSchema)
	if err != nil {
		return nil, err
	}
	if dgi.loaded == nil {
		dgi.loaded = map[string]*Schema{}
	}
	dgi.loaded[entry] = s
	return s, nil
}
