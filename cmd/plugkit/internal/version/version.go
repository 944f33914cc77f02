package version

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
)

// Info is what plugkit knows about its own build, and the --json
// document of plugkit version. Its field names are a stable interface.
type Info struct {
	// Version is the module version: a release tag for go install
	// …@VERSION, a pseudo-version or "(devel)" for a build from a clone.
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"` // VCS revision the binary was built from
	Time     string `json:"time,omitempty"`     // commit time of Revision
	Modified bool   `json:"modified"`           // the work tree had uncommitted changes
	Go       string `json:"go"`                 // Go toolchain that built the binary
	// SpecVersions are the Agent Plugins versions the loader implements.
	SpecVersions []string `json:"specVersions"`
}

// Build reads Info from the build information the Go
// toolchain embeds in every binary.
func Build() Info {
	v := Info{Version: "(unknown)", SpecVersions: agentplugin.SupportedVersions()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Version, v.Go = bi.Main.Version, bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// Text is plugkit version's text output, also printed by --version.
func (v Info) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugkit %s\n", v.Version)
	if v.Revision != "" {
		rev := v.Revision
		if v.Time != "" {
			rev += " (" + v.Time + ")"
		}
		if v.Modified {
			rev += " with uncommitted changes"
		}
		fmt.Fprintf(&b, "revision:      %s\n", rev)
	}
	fmt.Fprintf(&b, "go:            %s\n", v.Go)
	fmt.Fprintf(&b, "agent plugins: %s\n", strings.Join(v.SpecVersions, ", "))
	return b.String()
}

// versionOptions are the flags of plugkit version.
type versionOptions struct {
	asJSON bool
}

// NewCmdVersion builds plugkit version, which runs with fac.
func NewCmdVersion(fac *factory.Factory) *cobra.Command {
	opts := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print plugkit's version and the Agent Plugins versions it supports",
		Long: `Version prints the module version of this binary (a release tag when it was
installed with go install …@VERSION), the VCS revision it was built from,
the Go toolchain, and the Agent Plugins specification versions its loader
implements. plugkit --version prints the same.`,
		Example: `  plugkit version
  plugkit version --json
  plugkit --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := Build()
			return command.Output(cmd, opts.asJSON, v, func(w io.Writer) { io.WriteString(w, v.Text()) })
		},
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	return cmd
}
