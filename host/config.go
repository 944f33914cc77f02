package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/boundedfile"
	"github.com/plugkit/plugkit/internal/jsontree"
	"github.com/plugkit/plugkit/mcprun"
	"github.com/plugkit/plugkit/snapshot"
)

// ErrConfig is matched by every error of LoadConfig and ParseConfig.
var ErrConfig = errors.New("invalid host configuration")

// Limits of a host configuration file.
const (
	MaxConfigBytes = 1 << 20  // the file itself
	MaxSecretBytes = 64 << 10 // one value read from a file
)

// Config is a host configuration file: what the host adds to plugins that
// must never be part of them, credentials above all.
//
//	{
//	  "inheritEnv": ["AWS_PROFILE", "LC_*"],
//	  "servers": {
//	    "github/api": {
//	      "headers": {"Authorization": {"env": "GITHUB_TOKEN", "prefix": "Bearer "}},
//	      "env": {"API_KEY": {"file": "secrets/api-key"}, "REGION": "eu-west-1"}
//	    }
//	  }
//	}
//
// Servers are keyed by ID (PLUGIN/SERVER). A value is a string (taken as
// written) or an object with exactly one of "value", "env" (the name of a
// variable of the host's environment) or "file" (a file whose content, less
// one trailing newline, is the value; relative to the configuration file),
// and an optional "prefix" put before it. Values are read once, when the
// file is loaded, and appear in no error, log or diagnostic.
type Config struct {
	// InheritEnv names more variables of the host's environment that stdio
	// servers inherit (mcprun.PlanOptions.InheritEnv).
	InheritEnv []string
	// Overlays are the servers' headers and env values, resolved.
	Overlays Overlays
}

// configFile is the file's shape.
type configFile struct {
	InheritEnv []string                 `json:"inheritEnv"`
	Servers    map[string]serverOverlay `json:"servers"`
}

type serverOverlay struct {
	Headers map[string]configValue `json:"headers"`
	Env     map[string]configValue `json:"env"`
}

// configValue is where one value comes from.
type configValue struct {
	Value  *string `json:"value"`
	Env    string  `json:"env"`
	File   string  `json:"file"`
	Prefix string  `json:"prefix"`
}

// UnmarshalJSON accepts a string as {"value": STRING}.
func (v *configValue) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*v = configValue{Value: &s}
		return nil
	}
	type plain configValue
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode((*plain)(v))
}

// LoadConfig reads and resolves the host configuration file at path.
func LoadConfig(path string) (*Config, error) {
	b, err := boundedfile.Read(path, MaxConfigBytes, "MaxConfigBytes")
	if errors.Is(err, snapshot.ErrLimit) {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(b, filepath.Dir(path), os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseConfig parses a host configuration (see Config) and resolves its
// values: variables through lookupEnv, files relative to dir.
func ParseConfig(b []byte, dir string, lookupEnv func(string) (string, bool)) (*Config, error) {
	if err := jsontree.Check(b, 16); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	var cf configFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cf); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if err := mcprun.CheckInheritEnv(cf.InheritEnv); err != nil {
		return nil, fmt.Errorf("%w: inheritEnv: %v", ErrConfig, err)
	}
	c := &Config{InheritEnv: cf.InheritEnv, Overlays: Overlays{Headers: map[string]http.Header{}, Env: map[string]map[string]string{}}}
	for _, id := range slices.Sorted(maps.Keys(cf.Servers)) {
		plugin, name, ok := strings.Cut(id, "/")
		if !ok || plugin == "" || name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("%w: servers: %q is not a server ID PLUGIN/SERVER", ErrConfig, id)
		}
		o := cf.Servers[id]
		for _, k := range slices.Sorted(maps.Keys(o.Headers)) {
			v, err := o.Headers[k].resolve(dir, lookupEnv)
			if err == nil {
				err = agentplugin.CheckHeader(k, v)
			}
			if err != nil {
				return nil, fmt.Errorf("%w: server %s: header %q: %v", ErrConfig, id, k, err)
			}
			if c.Overlays.Headers[id] == nil {
				c.Overlays.Headers[id] = http.Header{}
			}
			if c.Overlays.Headers[id].Get(k) != "" {
				return nil, fmt.Errorf("%w: server %s: header %q appears twice under different casing", ErrConfig, id, k)
			}
			c.Overlays.Headers[id].Set(k, v)
		}
		for _, k := range slices.Sorted(maps.Keys(o.Env)) {
			if k == "" || strings.ContainsAny(k, "=\x00") || k == "PLUGIN_ROOT" || k == "PLUGIN_DATA" {
				return nil, fmt.Errorf("%w: server %s: env name %q cannot be set", ErrConfig, id, k)
			}
			v, err := o.Env[k].resolve(dir, lookupEnv)
			if err != nil {
				return nil, fmt.Errorf("%w: server %s: env %s: %v", ErrConfig, id, k, err)
			}
			if c.Overlays.Env[id] == nil {
				c.Overlays.Env[id] = map[string]string{}
			}
			c.Overlays.Env[id][k] = v
		}
	}
	return c, nil
}

// resolve reads the value. Its errors name the variable or the file, never
// the value.
func (v configValue) resolve(dir string, lookupEnv func(string) (string, bool)) (string, error) {
	n := 0
	for _, set := range []bool{v.Value != nil, v.Env != "", v.File != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return "", errors.New(`give exactly one of "value", "env" or "file"`)
	}
	switch {
	case v.Value != nil:
		return v.Prefix + *v.Value, nil
	case v.Env != "":
		s, ok := lookupEnv(v.Env)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", v.Env)
		}
		return v.Prefix + s, nil
	}
	p := v.File
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	b, err := boundedfile.Read(p, MaxSecretBytes, "MaxSecretBytes")
	if err != nil {
		return "", err
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	return v.Prefix + s, nil
}
