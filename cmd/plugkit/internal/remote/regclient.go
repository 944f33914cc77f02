package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/distribution"
)

// RegistryFlags are the flags every registry client verb shares. Tokens
// are never flags: they come from PLUGKIT_TOKEN or a file, so that they do
// not show in argv (ps, shell history).
type RegistryFlags struct {
	url string
	// TokenFile is --token-file, the file holding the registry token.
	TokenFile string
	// JSON is --json: the verb prints one JSON document.
	JSON bool
	// hasToken records whether client found a token, for the messages.
	hasToken bool
}

// Register adds the flags to cmd, the verb whose flags they are.
func (f *RegistryFlags) Register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.url, "registry", os.Getenv("PLUGKIT_REGISTRY"), "registry base URL (default $PLUGKIT_REGISTRY)")
	cmd.Flags().StringVar(&f.TokenFile, "token-file", "", "file holding the registry token (default $PLUGKIT_TOKEN)")
	cmd.Flags().BoolVar(&f.JSON, "json", false, "print one JSON document")
}

// Client builds the distribution client; an error is a usage error.
func (f *RegistryFlags) Client() (*distribution.Client, error) {
	if f.url == "" {
		return nil, command.Usagef("--registry URL is required (or set PLUGKIT_REGISTRY)")
	}
	token, err := f.Token()
	if err != nil {
		return nil, err
	}
	return &distribution.Client{BaseURL: strings.TrimSuffix(f.url, "/"), Token: token}, nil
}

// Token is the registry token: from --token-file, else $PLUGKIT_TOKEN,
// else none. An error is a usage error.
func (f *RegistryFlags) Token() (string, error) {
	token := os.Getenv("PLUGKIT_TOKEN")
	if f.TokenFile != "" {
		tokens, err := ReadTokenFile(f.TokenFile)
		if err != nil {
			return "", command.Usage(err)
		}
		if len(tokens) != 1 {
			return "", command.Usage(fmt.Errorf("%s: want exactly one token, found %d", f.TokenFile, len(tokens)))
		}
		token = tokens[0]
	}
	token = strings.TrimSpace(token)
	f.hasToken = token != ""
	return token, nil
}

// MaxTokenFile bounds a token file: tokens are short.
const MaxTokenFile = 1 << 20

// ReadTokenFile reads one token per line; blank lines and lines starting
// with '#' are skipped.
func ReadTokenFile(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var tokens []string
	sc := bufio.NewScanner(io.LimitReader(f, MaxTokenFile))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			tokens = append(tokens, line)
		}
	}
	return tokens, sc.Err()
}

// Request is what a verb asked the registry: with it, a refusal can say
// what is wrong in the user's terms instead of "HTTP 404".
type Request struct {
	// Action is what was attempted, for the messages: "publish",
	// "move a channel", "yank", "read", "change owners", ….
	Action string
	// Role is the token role the action needs: "reader", "publisher" or
	// "admin".
	Role string
	// PluginID, Channel, ReleaseID and Digest name what it was about,
	// where the action has one.
	PluginID, Channel, ReleaseID, Digest string
}

// Refused turns a failed registry call into exit status 1 with a message
// that says what is wrong. The registry's own message is never shown: it
// is server text, which only the error code and the diagnostics of a
// rejected plugin are trusted to carry (and those are printed through
// terminal.Safe like every text output).
func (f *RegistryFlags) Refused(cmd *cobra.Command, c *distribution.Client, req Request, err error) error {
	var se *distribution.StatusError
	if !errors.As(err, &se) {
		if cmd.Context().Err() != nil {
			return err
		}
		return command.Explain(cmd, command.Failed(err)) // a rejected download shows its diagnostics
	}
	msg := f.ExplainStatus(cmd.Context(), c, req, se)
	out := command.Failed(&command.SummaryError{Msg: msg, Err: err})
	if len(se.Diagnostics) > 0 {
		if !f.JSON {
			command.PrintDiagnostics(cmd.OutOrStdout(), se.Diagnostics)
		}
		out = command.WithDiagnostics(out, se.Diagnostics)
	}
	return out
}

// ExplainStatus words a registry's refusal.
func (f *RegistryFlags) ExplainStatus(ctx context.Context, c *distribution.Client, req Request, se *distribution.StatusError) string {
	switch {
	case se.Status == http.StatusUnauthorized && f.hasToken:
		return "the registry does not accept this token: check PLUGKIT_TOKEN or --token-file"
	case se.Status == http.StatusUnauthorized:
		return "this registry needs a token: set PLUGKIT_TOKEN or --token-file"
	case se.Code == distribution.CodeNotOwner:
		return fmt.Sprintf("%s belongs to other publishers: an admin can grant this token's identity access (plugkit owners grant)", req.PluginID)
	case se.Status == http.StatusForbidden:
		article := "a"
		if req.Role == "admin" {
			article = "an"
		}
		return fmt.Sprintf("this token may not %s: that needs %s %s token", req.Action, article, req.Role)
	case se.Status == http.StatusNotFound:
		return f.explainNotFound(ctx, c, req)
	case se.Code == distribution.CodeVersionConflict:
		return fmt.Sprintf("%s is already published with other bytes: releases never change, so publish a new version", req.ReleaseID)
	case se.Code == distribution.CodeReleaseYanked:
		return fmt.Sprintf("%s is yanked: restore it first (plugkit yank --undo %s)", req.ReleaseID, req.ReleaseID)
	case se.Code == distribution.CodeQuotaExceeded:
		return fmt.Sprintf("%s has reached a quota of this registry (releases, channels or installation reports per plugin); its operator can raise it", req.PluginID)
	case se.Code == distribution.CodePluginRejected:
		return fmt.Sprintf("the registry rejected the plugin (%s)", command.Counts(se.Diagnostics))
	case se.Status == http.StatusRequestEntityTooLarge:
		return "the archive is over this registry's size limits"
	case se.Code == distribution.CodeUploadTooSlow:
		return "the upload was slower than this registry's minimum rate: the connection is too slow or stalled"
	case se.Code == distribution.CodeBusy:
		wait := "later"
		if se.RetryAfter > 0 {
			wait = fmt.Sprintf("in %d s", se.RetryAfter)
		}
		return "the registry is busy with other uploads: retry " + wait
	case se.Status >= 500:
		return fmt.Sprintf("the registry failed (HTTP %d): its log says why", se.Status)
	}
	return se.Error()
}

// explainNotFound says which part of a request does not exist, looking
// the plugin up when the request named one: "no release of kv on channel
// stable (channels: beta)".
func (f *RegistryFlags) explainNotFound(ctx context.Context, c *distribution.Client, req Request) string {
	if req.PluginID == "" {
		if req.Digest != "" {
			return "no artifact " + req.Digest + " on this registry"
		}
		return "no release " + req.ReleaseID + " on this registry"
	}
	p, err := c.Plugin(ctx, req.PluginID)
	switch {
	case errors.Is(err, distribution.ErrNoPlugin):
		return "no plugin " + req.PluginID + " on this registry"
	case err != nil:
		return fmt.Sprintf("not found: %s on this registry", req.describe())
	case req.ReleaseID != "":
		return fmt.Sprintf("no release %s (releases: %s)", req.ReleaseID, listReleases(p))
	case req.Channel != "":
		return fmt.Sprintf("no release of %s on channel %s (channels: %s)", req.PluginID, req.Channel, listChannels(p))
	}
	return fmt.Sprintf("not found: %s on this registry", req.describe())
}

func (r Request) describe() string {
	for _, s := range []string{r.ReleaseID, r.Digest, r.PluginID} {
		if s != "" {
			return s
		}
	}
	return "what was asked"
}

// listChannels is "beta, stable", or "none" when every channel is empty.
func listChannels(p *distribution.CatalogPlugin) string {
	var names []string
	for ch := range p.Channels {
		names = append(names, ch)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// listReleases names the newest releases, at most five.
func listReleases(p *distribution.CatalogPlugin) string {
	var ids []string
	for i, r := range p.Releases {
		if i == 5 {
			ids = append(ids, fmt.Sprintf("and %d more", len(p.Releases)-5))
			break
		}
		ids = append(ids, r.ID)
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// CheckResolveQuery refuses a malformed query before it is sent. A
// --release given as a bare version is completed to PLUGIN@VERSION.
func CheckResolveQuery(q *distribution.ResolveQuery) error {
	if err := distribution.CheckPluginID(q.PluginID); err != nil {
		return err
	}
	if q.Channel != "" && q.ReleaseID != "" {
		return command.Usagef("--channel and --release exclude each other")
	}
	if q.Channel != "" {
		return distribution.CheckChannel(q.Channel)
	}
	if q.ReleaseID != "" {
		q.ReleaseID = QualifyRelease(q.PluginID, q.ReleaseID)
		return distribution.CheckReleaseID(q.ReleaseID)
	}
	return nil
}

// ResolveRequest is what a resolve asked, for the messages of Refused.
func ResolveRequest(q distribution.ResolveQuery) Request {
	ch := q.Channel
	if ch == "" && q.ReleaseID == "" {
		ch = distribution.DefaultChannel
	}
	return Request{Action: "read", Role: "reader", PluginID: q.PluginID, Channel: ch, ReleaseID: q.ReleaseID}
}

// QualifyRelease makes a release ID of a bare version of plugin.
func QualifyRelease(plugin, release string) string {
	if release == "" || distribution.CheckReleaseID(release) == nil {
		return release
	}
	return plugin + "@" + release
}
