package cli

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report"
	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/docs"
)

// Where the SARIF log sends readers: the project, and the page every rule's
// help links into.
const (
	projectURL     = "https://github.com/plugkit/plugkit"
	diagnosticsURL = projectURL + "/blob/main/docs/diagnostics.md"
)

// writeSARIF writes one SARIF 2.1.0 log for every validated path: one run
// of plugkit, one rule per documented diagnostic code (its meaning from
// docs/diagnostics.md as help, the section as help URI), and one result per
// diagnostic, located in the plugin's file relative to root (the current
// directory when ""). Text in a SARIF log is data for other tools: it is
// exact, like --json.
func writeSARIF(w io.Writer, reports []*validateReport, root string) error {
	loc, err := newLocator(root)
	if err != nil {
		return fmt.Errorf("--sarif-root: %w", err)
	}
	run := sarif.NewRunWithInformationURI("plugkit", projectURL)
	run.Tool.Driver.WithFullName("plugkit: Agent Plugins " + strings.Join(agentplugin.SupportedVersions(), ", ") + " validator")
	if v := buildVersion().Version; v != "(devel)" && v != "(unknown)" {
		run.Tool.Driver.WithSemanticVersion(strings.TrimPrefix(v, "v"))
	}
	columnKind := "utf16CodeUnits"
	run.ColumnKind = &columnKind
	for _, c := range docs.DiagnosticCodes() {
		helpURI := diagnosticsURL + "#" + c.Anchor
		run.AddRule(c.Code).WithDescription(firstSentence(c.Meaning)).
			WithFullDescription(sarif.NewMultiformatMessageString().WithText(c.Meaning)).
			WithHelpURI(helpURI).
			WithHelp(sarif.NewMultiformatMessageString().
				WithText(c.Meaning + ". See " + helpURI).
				WithMarkdown(c.Meaning + "\n\nSee [" + c.Section + "](" + helpURI + ")."))
	}
	for _, r := range reports {
		for _, d := range r.Diagnostics {
			if run.GetRuleIndex(d.Code) < 0 {
				// A code this binary reports but its page does not list
				// still gets a rule, so every result names one.
				run.AddRule(d.Code).WithDescription(d.Code).WithHelpURI(diagnosticsURL)
			}
			l := loc.locate(r, d)
			text := d.Message
			if !l.InFile && d.Path != "" {
				text = position(d) + ": " + d.Message
			}
			region := sarif.NewRegion()
			if l.Line > 0 {
				region.WithStartLine(l.Line)
				if l.Column > 0 {
					region.WithStartColumn(l.Column)
				}
			}
			phys := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(fileURI(l.File)))
			if l.Line > 0 {
				phys.WithRegion(region)
			}
			res := run.CreateResultForRule(d.Code).WithLevel(string(d.Severity)).WithMessage(sarif.NewTextMessage(text)).
				AddLocation(sarif.NewLocationWithPhysicalLocation(phys))
			if d.Pointer != "" {
				props := sarif.NewPropertyBag()
				props.Add("pointer", d.Pointer)
				res.WithProperties(props)
			}
		}
	}
	log := report.NewV210Report()
	log.AddRun(run)
	if err := log.PrettyWrite(w); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}

// fileURI is a SARIF artifact URI for a slash-separated path: a relative
// reference for a relative path, a file URI for an absolute one, with
// everything a URI cannot hold percent-encoded.
func fileURI(p string) string {
	if strings.HasPrefix(p, "/") {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	// url.URL writes "./" before a first segment holding ':', which
	// would read as a scheme.
	return (&url.URL{Path: p}).String()
}

// firstSentence is the text up to the first "; " or ": " that ends a
// clause, for a rule's short description; the whole text otherwise.
func firstSentence(s string) string {
	if i := strings.Index(s, "; "); i > 0 {
		return s[:i]
	}
	return s
}
