package home

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/trust"
)

// NewCmdPolicy builds plugkit policy, which runs with fac.
func NewCmdPolicy(fac *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Set or remove the trust policy of the plugin home, with consent",
		Long: `The trust policy of a home (HOME/policy.json, docs/trust.md) decides which
plugins install, update and sync admit; the lock records its sha256 and the
rule that admitted each plugin. While the lock records a policy, the home
must hold that very policy: a missing policy.json is policy-missing, a
different one policy-mismatch, and install, update and sync refuse both
(list, check and remove still work). Only these verbs, and install
--policy, change it, each showing what changes and asking first.`,
		Example: `  plugkit policy set team-policy.yaml
  plugkit policy remove --yes`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newPolicySetCmd(fac), newPolicyRemoveCmd(fac))
	return cmd
}

// policySetOptions are the flags of plugkit policy set.
type policySetOptions struct {
	home homeFlags
	yes  bool
}

func newPolicySetCmd(fac *factory.Factory) *cobra.Command {
	opts := &policySetOptions{}
	cmd := &cobra.Command{
		Use:   "set FILE",
		Short: "Make FILE the home's trust policy",
		Long: `Set makes the policy in FILE (JSON or YAML) the home's: every installed plugin
must satisfy it (it is admitted again, its evidence read from its source),
and policy.json, the lock's policy digest and each plugin's recorded rule
change together. It shows the old and new digest and each plugin's new
rule, and asks (on a terminal, or --yes in scripts). It also repairs a home
whose policy.json is missing or does not match its lock.

--json prints {"old", "new", "plugins": [{"name", "old", "new"}],
"changed"}.

Exit status: 0 set (or already the policy), 1 refused (a plugin the policy
does not admit, no consent), 2 usage, I/O or a malformed policy
(policy-invalid).`,
		Example: `  plugkit policy set team-policy.yaml
  plugkit policy set team-policy.json --yes --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := trust.LoadPolicy(args[0])
			if err != nil {
				return command.WithCode(command.CodePolicyInvalid, command.Usage(err))
			}
			h, err := opts.home.open(true)
			if err != nil {
				return err
			}
			consent := policyConsent(fac, cmd, opts.yes, opts.home.asJSON)
			c, err := h.SetPolicy(cmd.Context(), p, consent)
			return opts.home.finishPolicy(cmd, c, err, consent == nil)
		},
	}
	opts.home.register(fac, cmd, true, true)
	cmd.Flags().BoolVar(&opts.yes, "yes", false, "consent to the policy change without asking")
	return cmd
}

// policyRemoveOptions are the flags of plugkit policy remove.
type policyRemoveOptions struct {
	home homeFlags
	yes  bool
}

func newPolicyRemoveCmd(fac *factory.Factory) *cobra.Command {
	opts := &policyRemoveOptions{}
	cmd := &cobra.Command{
		Use:   "remove",
		Short: "Remove the home's trust policy",
		Long: `Remove deletes HOME/policy.json, the lock's policy digest and every plugin's
recorded rule, together, after showing what changes and asking (on a
terminal, or --yes in scripts). From then on install admits any plugin
the user consents to.

--json prints {"old", "new": "", "plugins": [{"name", "old"}], "changed"}.

Exit status: 0 removed (or there was none), 1 no consent, 2 usage or I/O
error.`,
		Example: `  plugkit policy remove
  plugkit policy remove --yes --home ./.plugkit`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := opts.home.open(false)
			if err != nil {
				return err
			}
			consent := policyConsent(fac, cmd, opts.yes, opts.home.asJSON)
			c, err := h.RemovePolicy(cmd.Context(), consent)
			return opts.home.finishPolicy(cmd, c, err, consent == nil)
		},
	}
	opts.home.register(fac, cmd, true, false)
	cmd.Flags().BoolVar(&opts.yes, "yes", false, "consent to removing the policy without asking")
	return cmd
}

// policyConsent asks for consent to a policy change as consentFunc does
// for a plugin.
func policyConsent(fac *factory.Factory, cmd *cobra.Command, yes, asJSON bool) install.PolicyConsentFunc {
	ask := asker(fac, cmd, yes, asJSON)
	if ask == nil {
		return nil
	}
	return func(ctx context.Context, c *install.PolicyChange) (bool, error) {
		return ask(ctx, func(w io.Writer) { printPolicyChange(w, c, true) }, "Change the trust policy?")
	}
}

// finishPolicy prints a policy change, or fails with its error; on a
// refusal the change is still shown in text. noOne says that there was no
// one to ask for consent.
func (f *homeFlags) finishPolicy(cmd *cobra.Command, c *install.PolicyChange, err error, noOne bool) error {
	if err != nil {
		if c != nil && !f.asJSON {
			printPolicyChange(cmd.OutOrStdout(), c, true)
		}
		if noOne {
			err = consentHint(err, nil)
		}
		return Error(err)
	}
	return command.Output(cmd, f.asJSON, c, func(w io.Writer) { printPolicyChange(w, c, false) })
}

// printPolicyChange shows the old and new policy and each plugin's
// decision under the new one.
func printPolicyChange(w io.Writer, c *install.PolicyChange, would bool) {
	if !c.Changed {
		fmt.Fprintln(w, "the trust policy is already as asked: nothing to do")
		return
	}
	verb := "trust policy"
	if would {
		verb = "would change the trust policy"
	}
	fmt.Fprintf(w, "%s: %s -> %s\n", verb, orNone(c.Old), orNone(c.New))
	for _, p := range c.Plugins {
		switch {
		case p.New != nil:
			fmt.Fprintf(w, "  %s: admitted by %s%s\n", safe(p.Name), safe(p.New.Rule), signedBy(p.New))
		case c.New == "":
			fmt.Fprintf(w, "  %s: no longer checked by a policy\n", safe(p.Name))
		}
	}
}

func orNone(digest string) string {
	if digest == "" {
		return "none"
	}
	return digest
}
