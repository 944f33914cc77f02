package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/plugkit/plugkit/internal/boundedfile"
)

// Config holds the settings of a home, from HOME/config.json (optional,
// written by hand; unknown keys are an error so that a typo is not
// silently ignored).
type Config struct {
	// ConsentOnCode makes an update that changes files under the paths of
	// "./" commands need consent, as if it changed the launch surface.
	ConsentOnCode bool `json:"consentOnCode"`
}

// ReadConfig reads HOME/config.json; a home without one has the zero
// Config.
func (h *Home) ReadConfig() (*Config, error) {
	b, err := boundedfile.Read(h.path(ConfigFile), 1<<20, "config size")
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, err
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", h.path(ConfigFile), err)
	}
	return &c, nil
}
