package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/distribution"
)

// registryFlags are the flags every registry client verb shares. Tokens
// are never flags: they come from PLUGKIT_TOKEN or a file, so that they do
// not show in argv (ps, shell history).
type registryFlags struct {
	url       string
	tokenFile string
	asJSON    bool
}

func (f *registryFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.url, "registry", os.Getenv("PLUGKIT_REGISTRY"), "registry base URL (default $PLUGKIT_REGISTRY)")
	cmd.Flags().StringVar(&f.tokenFile, "token-file", "", "file holding the registry token (default $PLUGKIT_TOKEN)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print one JSON document")
}

// client builds the distribution client; an error is a usage error.
func (f *registryFlags) client() (*distribution.Client, error) {
	if f.url == "" {
		return nil, usage(errors.New("--registry URL is required"))
	}
	token := os.Getenv("PLUGKIT_TOKEN")
	if f.tokenFile != "" {
		tokens, err := readTokenFile(f.tokenFile)
		if err != nil {
			return nil, usage(err)
		}
		if len(tokens) != 1 {
			return nil, usage(fmt.Errorf("%s: want exactly one token, found %d", f.tokenFile, len(tokens)))
		}
		token = tokens[0]
	}
	return &distribution.Client{BaseURL: strings.TrimSuffix(f.url, "/"), Token: strings.TrimSpace(token)}, nil
}

// maxTokenFile bounds a token file: tokens are short.
const maxTokenFile = 1 << 20

// readTokenFile reads one token per line; blank lines and lines starting
// with '#' are skipped.
func readTokenFile(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var tokens []string
	sc := bufio.NewScanner(io.LimitReader(f, maxTokenFile))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			tokens = append(tokens, line)
		}
	}
	return tokens, sc.Err()
}

// refused turns a failed registry call into exit status 1 with the reason;
// a rejected plugin's diagnostics are shown as every verb shows them
// (explain), made safe for a terminal since the server sent them.
func refused(cmd *cobra.Command, err error) error {
	return explain(cmd, failed(err))
}
