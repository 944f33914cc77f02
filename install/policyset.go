package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/plugkit/plugkit/trust"
)

// PolicyChange is what setting or removing the home's trust policy does.
type PolicyChange struct {
	// Old and New are the sha256 of the policy before and after, "" for
	// none. Old is the policy the lock records, or else the home's file.
	Old string `json:"old"`
	New string `json:"new"`
	// Plugins are the installed plugins with the decision of the new
	// policy (nil Trust when the policy is removed), in lock order.
	Plugins []PolicyDecision `json:"plugins"`
	// Changed says whether anything changes at all.
	Changed bool `json:"changed"`
}

// PolicyDecision is how a policy change treats one installed plugin.
type PolicyDecision struct {
	Name string `json:"name"`
	// Old and New are the decisions before and after; nil for none.
	Old *Trust `json:"old,omitempty"`
	New *Trust `json:"new,omitempty"`
}

// PolicyConsentFunc asks whether a policy change may go ahead; it is
// called once, before anything is written. Nil refuses.
type PolicyConsentFunc func(ctx context.Context, c *PolicyChange) (bool, error)

// SetPolicy makes p the home's trust policy: every installed plugin must
// satisfy it (else the error matches trust.ErrRefused and nothing
// changes), consent is asked, and policy.json and the lock's policy digest
// and decisions change together. A home whose policy.json is missing or
// does not match its lock can be repaired this way.
func (h *Home) SetPolicy(ctx context.Context, p *trust.Policy, consent PolicyConsentFunc) (*PolicyChange, error) {
	w, err := h.lockWriter(ctx)
	if err != nil {
		return nil, err
	}
	defer w.close()
	np, err := h.standalone(p)
	if err != nil {
		return nil, err
	}
	c := w.policyChange(np.policy.Digest.String())
	next := w.lock.clone()
	next.Policy = c.New
	for i := range next.Plugins {
		e := &next.Plugins[i]
		t, err := h.admitEntry(ctx, np.policy, e)
		if err != nil {
			return c, fmt.Errorf("%w (installed, and the policy %s must admit every installed plugin): nothing was changed", err, c.New)
		}
		c.Plugins[i].New, e.Trust = t, t
		c.Changed = c.Changed || !sameTrust(c.Plugins[i].Old, t)
	}
	cur, err := h.Policy()
	rewrite := err != nil || cur == nil || cur.Digest != np.policy.Digest
	c.Changed = c.Changed || c.Old != c.New || rewrite
	if !c.Changed {
		return c, nil
	}
	if err := askPolicyConsent(ctx, consent, c); err != nil {
		return c, err
	}
	t := txn{next: next}
	if rewrite {
		t.policy = np.bytes
	}
	return c, w.commit(t)
}

// RemovePolicy removes the home's trust policy: policy.json, the lock's
// policy digest and every recorded decision, together, after consent.
func (h *Home) RemovePolicy(ctx context.Context, consent PolicyConsentFunc) (*PolicyChange, error) {
	w, err := h.lockWriter(ctx)
	if err != nil {
		return nil, err
	}
	defer w.close()
	c := w.policyChange("")
	next := w.lock.clone()
	next.Policy = ""
	for i := range next.Plugins {
		next.Plugins[i].Trust = nil
		c.Changed = c.Changed || c.Plugins[i].Old != nil
	}
	// A policy.json is removed even when it cannot be read.
	_, err = os.Lstat(h.path(PolicyFile))
	c.Changed = c.Changed || c.Old != "" || !errors.Is(err, fs.ErrNotExist)
	if !c.Changed {
		return c, nil
	}
	if err := askPolicyConsent(ctx, consent, c); err != nil {
		return c, err
	}
	return c, w.commit(txn{next: next, removePolicy: true})
}

// policyChange starts the description of a change of the policy to next.
func (w *writer) policyChange(next string) *PolicyChange {
	c := &PolicyChange{Old: w.lock.Policy, New: next, Plugins: make([]PolicyDecision, len(w.lock.Plugins))}
	if c.Old == "" {
		if cur, err := w.h.Policy(); err == nil && cur != nil {
			c.Old = cur.Digest.String()
		}
	}
	for i, e := range w.lock.Plugins {
		c.Plugins[i] = PolicyDecision{Name: e.Name, Old: e.Trust}
	}
	return c
}

func sameTrust(a, b *Trust) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// askPolicyConsent asks consent for c; nil consent refuses.
func askPolicyConsent(ctx context.Context, consent PolicyConsentFunc, c *PolicyChange) error {
	if consent == nil {
		return fmt.Errorf("%w to change the trust policy: nothing was changed", ErrConsent)
	}
	ok, err := consent(ctx, c)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w to change the trust policy: refused; nothing was changed", ErrConsent)
	}
	return nil
}
