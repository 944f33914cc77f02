package build

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/version"
	"github.com/plugkit/plugkit/docs"
)

// Where the SARIF log sends readers: the project, and the page every rule's
// help links into.
const (
	projectURL     = "https://github.com/plugkit/plugkit"
	diagnosticsURL = projectURL + "/blob/main/docs/diagnostics.md"
)

// The SARIF 2.1.0 objects plugkit writes, with only the members it sets.
// The members, their order and the constants among them (the empty arrays,
// the -1 indexes and offsets, "kind": "fail", "rank": -1) are those the
// go-sarif library wrote before these types replaced it, so that logs stay
// byte for byte what code scanning set-ups already diff and upload; the
// library is gone because it linked a JSON Schema validator, run at every
// start of plugkit, that plugkit never called. An empty array is a [0]
// array, which encoding/json writes as [] with no value to set.
type (
	sarifReport struct {
		Schema     string      `json:"$schema"`
		Version    string      `json:"version"`
		Runs       [1]sarifRun `json:"runs"`
		Properties struct{}    `json:"properties"`
	}
	sarifRun struct {
		Addresses                [0]any            `json:"addresses"`
		ColumnKind               string            `json:"columnKind"`
		Graphs                   [0]any            `json:"graphs"`
		Invocations              [0]any            `json:"invocations"`
		Language                 string            `json:"language"`
		LogicalLocations         [0]any            `json:"logicalLocations"`
		NewlineSequences         [2]string         `json:"newlineSequences"`
		Policies                 [0]any            `json:"policies"`
		RedactionTokens          [0]any            `json:"redactionTokens"`
		Results                  []sarifDiagnostic `json:"results"`
		RunAggregates            [0]any            `json:"runAggregates"`
		Taxonomies               [0]any            `json:"taxonomies"`
		ThreadFlowLocations      [0]any            `json:"threadFlowLocations"`
		Tool                     sarifTool         `json:"tool"`
		Translations             [0]any            `json:"translations"`
		VersionControlProvenance [0]any            `json:"versionControlProvenance"`
		WebRequests              [0]any            `json:"webRequests"`
		WebResponses             [0]any            `json:"webResponses"`
	}
	sarifTool struct {
		Driver     sarifDriver `json:"driver"`
		Extensions [0]any      `json:"extensions"`
	}
	sarifDriver struct {
		Contents            [2]string   `json:"contents"`
		FullName            string      `json:"fullName"`
		InformationURI      string      `json:"informationUri"`
		IsComprehensive     bool        `json:"isComprehensive"`
		Language            string      `json:"language"`
		Locations           [0]any      `json:"locations"`
		Name                string      `json:"name"`
		Notifications       [0]any      `json:"notifications"`
		Rules               []sarifRule `json:"rules"`
		SemanticVersion     string      `json:"semanticVersion,omitempty"`
		SupportedTaxonomies [0]any      `json:"supportedTaxonomies"`
		Taxa                [0]any      `json:"taxa"`
	}
	sarifRule struct {
		FullDescription  *sarifText `json:"fullDescription,omitempty"`
		Help             *sarifHelp `json:"help,omitempty"`
		HelpURI          string     `json:"helpUri"`
		ID               string     `json:"id"`
		Relationships    [0]any     `json:"relationships"`
		ShortDescription sarifText  `json:"shortDescription"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifHelp struct {
		Markdown string `json:"markdown"`
		Text     string `json:"text"`
	}
	sarifDiagnostic struct {
		Attachments      [0]any           `json:"attachments"`
		CodeFlows        [0]any           `json:"codeFlows"`
		Fixes            [0]any           `json:"fixes"`
		GraphTraversals  [0]any           `json:"graphTraversals"`
		Graphs           [0]any           `json:"graphs"`
		Kind             string           `json:"kind"`
		Level            string           `json:"level,omitempty"`
		Locations        [1]sarifLocation `json:"locations"`
		Message          sarifMessage     `json:"message"`
		Properties       *sarifProperties `json:"properties,omitempty"`
		Rank             int              `json:"rank"`
		RelatedLocations [0]any           `json:"relatedLocations"`
		RuleID           string           `json:"ruleId"`
		RuleIndex        int              `json:"ruleIndex"`
		Stacks           [0]any           `json:"stacks"`
		Taxa             [0]any           `json:"taxa"`
	}
	sarifLocation struct {
		Annotations      [0]any                `json:"annotations"`
		ID               int                   `json:"id"`
		LogicalLocations [0]any                `json:"logicalLocations"`
		PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
		Relationships    [0]any                `json:"relationships"`
	}
	sarifPhysicalLocation struct {
		ArtifactLocation struct {
			Index int    `json:"index"`
			URI   string `json:"uri"`
		} `json:"artifactLocation"`
		Region *sarifRegion `json:"region,omitempty"`
	}
	sarifRegion struct {
		ByteOffset  int `json:"byteOffset"`
		CharOffset  int `json:"charOffset"`
		StartColumn int `json:"startColumn,omitempty"`
		StartLine   int `json:"startLine"`
	}
	sarifMessage struct {
		Arguments [0]any `json:"arguments"`
		Text      string `json:"text"`
	}
	// sarifProperties is a result's property bag: the JSON pointer of the
	// diagnostic's value in its file.
	sarifProperties struct {
		Pointer string `json:"pointer"`
	}
)

// writeSARIF writes one SARIF 2.1.0 log for every validated path: one run
// of plugkit, one rule per documented diagnostic code (its meaning from
// docs/diagnostics.md as help, the section as help URI), and one result per
// diagnostic, located in the plugin's file relative to root (the current
// directory when ""). Text in a SARIF log is data for other tools: it is
// exact, like --json.
func writeSARIF(w io.Writer, reports []*ValidateReport, root string) error {
	loc, err := newLocator(root)
	if err != nil {
		return fmt.Errorf("--sarif-root: %w", err)
	}
	log := sarifReport{
		Schema:  "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/main/sarif-2.1/schema/sarif-schema-2.1.0.json",
		Version: "2.1.0",
	}
	run := &log.Runs[0]
	run.ColumnKind = "utf16CodeUnits"
	run.Language = "en-US"
	run.NewlineSequences = [2]string{"\r\n", "\n"}
	run.Results = []sarifDiagnostic{}
	driver := &run.Tool.Driver
	driver.Contents = [2]string{"localizedData", "nonLocalizedData"}
	driver.FullName = "plugkit: Agent Plugins " + strings.Join(agentplugin.SupportedVersions(), ", ") + " validator"
	driver.InformationURI = projectURL
	driver.Language = "en-US"
	driver.Name = "plugkit"
	if v := version.Build().Version; v != "(devel)" && v != "(unknown)" {
		driver.SemanticVersion = strings.TrimPrefix(v, "v")
	}
	codes := docs.DiagnosticCodes()
	driver.Rules = make([]sarifRule, 0, len(codes))
	ruleIndex := make(map[string]int, len(codes))
	for _, c := range codes { // each once (docs.TestEveryCodeDocumented)
		helpURI := diagnosticsURL + "#" + c.Anchor
		ruleIndex[c.Code] = len(driver.Rules)
		driver.Rules = append(driver.Rules, sarifRule{
			FullDescription: &sarifText{c.Meaning},
			Help: &sarifHelp{
				Markdown: c.Meaning + "\n\nSee [" + c.Section + "](" + helpURI + ").",
				Text:     c.Meaning + ". See " + helpURI,
			},
			HelpURI:          helpURI,
			ID:               c.Code,
			ShortDescription: sarifText{firstSentence(c.Meaning)},
		})
	}
	for _, r := range reports {
		for _, d := range r.Diagnostics {
			i, ok := ruleIndex[d.Code]
			if !ok {
				// A code this binary reports but its page does not list
				// still gets a rule, so every result names one.
				i = len(driver.Rules)
				ruleIndex[d.Code] = i
				driver.Rules = append(driver.Rules, sarifRule{HelpURI: diagnosticsURL, ID: d.Code, ShortDescription: sarifText{d.Code}})
			}
			l := loc.locate(r, d)
			res := sarifDiagnostic{Kind: "fail", Level: string(d.Severity), Rank: -1, RuleID: d.Code, RuleIndex: i}
			res.Message.Text = d.Message
			if !l.InFile && d.Path != "" {
				res.Message.Text = position(d) + ": " + d.Message
			}
			where := &res.Locations[0]
			where.ID = -1
			where.PhysicalLocation.ArtifactLocation.Index = -1
			where.PhysicalLocation.ArtifactLocation.URI = fileURI(l.File)
			if l.Line > 0 {
				region := &sarifRegion{ByteOffset: -1, CharOffset: -1, StartLine: l.Line}
				if l.Column > 0 {
					region.StartColumn = l.Column
				}
				where.PhysicalLocation.Region = region
			}
			if d.Pointer != "" {
				res.Properties = &sarifProperties{Pointer: d.Pointer}
			}
			run.Results = append(run.Results, res)
		}
	}
	out, err := json.MarshalIndent(&log, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
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
