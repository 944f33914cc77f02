// Package storetest is the conformance suite of store.Store: every
// implementation runs Run from its own tests, so that the SQLite store and
// any other backend (PostgreSQL) are held to one contract.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openFresh(t) })
//	}
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// Open returns an empty store for one test; the suite closes nothing, so
// Open registers its own cleanup.
type Open func(t *testing.T) store.Store

// Run runs every conformance test against stores made by open.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		f    func(*testing.T, store.Store)
	}{
		{"PublishIsIdempotentAndReleasesImmutable", testPublishIdempotent},
		{"YankHidesFromChannelOnly", testYank},
		{"FirstPublisherOwns", testFirstPublisherOwns},
		{"OwnerChanges", testOwnerChanges},
		{"OwnerlessPluginIsAdminOnly", testOwnerless},
		{"ConcurrentFirstPublishesHaveOneOwner", testConcurrentClaims},
		{"ConcurrentPublishes", testConcurrentPublishes},
		{"Quotas", testQuotas},
		{"CheckPublishAgreesWithPublish", testCheckPublish},
		{"CatalogPages", testCatalogPages},
		{"Installations", testInstallations},
		{"InstallationPages", testInstallationPages},
		{"Tokens", testTokens},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, open(t)) })
	}
}

// Identities of the suite.
var (
	alice = store.Actor{Identity: "alice"}
	bob   = store.Actor{Identity: "bob"}
	admin = store.Actor{Identity: "root", Admin: true}
)

// Digest returns a distinct well-formed digest for n.
func Digest(n int) string { return fmt.Sprintf("sha256:%064x", n) }

// NewRelease returns a publish of plugin@version with digest by actor.
func NewRelease(by store.Actor, plugin, version, digest, channel string) store.NewRelease {
	return store.NewRelease{
		Name:    plugin,
		Channel: channel,
		By:      by,
		Release: distribution.Release{
			ID:             distribution.ReleaseID(plugin, version, digest),
			PluginID:       plugin,
			Version:        version,
			Description:    plugin + " " + version,
			ArtifactDigest: digest,
			Size:           42,
			PublishedAt:    time.Now().UTC(),
		},
	}
}

func publish(t *testing.T, s store.Store, r store.NewRelease) distribution.Release {
	t.Helper()
	rel, _, err := s.Publish(context.Background(), r)
	if err != nil {
		t.Fatalf("publish %s: %v", r.Release.ID, err)
	}
	return rel
}

func testPublishIdempotent(t *testing.T, s store.Store) {
	ctx := context.Background()
	rel, created, err := s.Publish(ctx, NewRelease(alice, "demo", "1.0.0", Digest(1), "stable"))
	if err != nil || !created || rel.ID != "demo@1.0.0" || rel.ArtifactDigest != Digest(1) || rel.Yanked {
		t.Fatalf("first publish: %+v %v %v", rel, created, err)
	}
	if _, created, err := s.Publish(ctx, NewRelease(alice, "demo", "1.0.0", Digest(1), "beta")); err != nil || created {
		t.Fatalf("same digest again: created=%v err=%v", created, err)
	}
	if _, _, err := s.Publish(ctx, NewRelease(alice, "demo", "1.0.0", Digest(2), "stable")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("other digest: %v, want ErrConflict", err)
	}
	for _, ch := range []string{"stable", "beta"} {
		got, err := s.Channel(ctx, "demo", ch)
		if err != nil || got.ArtifactDigest != Digest(1) {
			t.Fatalf("channel %s: %+v %v", ch, got, err)
		}
	}
	if _, err := s.Channel(ctx, "demo", "nightly"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown channel: %v", err)
	}
	if _, err := s.Release(ctx, "demo@9"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown release: %v", err)
	}
	if ok, err := s.HasArtifact(ctx, Digest(1)); !ok || err != nil {
		t.Fatalf("HasArtifact = %v %v", ok, err)
	}
	if ok, err := s.HasArtifact(ctx, Digest(2)); ok || err != nil {
		t.Fatalf("HasArtifact(unpublished) = %v %v", ok, err)
	}
}

func testYank(t *testing.T, s store.Store) {
	ctx := context.Background()
	publish(t, s, NewRelease(alice, "demo", "1.0.0", Digest(1), "stable"))
	publish(t, s, NewRelease(alice, "demo", "2.0.0", Digest(2), "stable"))
	if rel, err := s.SetYanked(ctx, alice, "demo@2.0.0", true); err != nil || !rel.Yanked {
		t.Fatalf("yank: %+v %v", rel, err)
	}
	if _, err := s.Channel(ctx, "demo", "stable"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("channel on yanked release: %v", err)
	}
	if rel, err := s.Release(ctx, "demo@2.0.0"); err != nil || !rel.Yanked {
		t.Fatalf("release by id: %+v %v", rel, err)
	}
	if ok, _ := s.HasArtifact(ctx, Digest(2)); !ok {
		t.Fatal("a yanked artifact must stay downloadable")
	}
	change := store.ChannelChange{By: alice, PluginID: "demo", Channel: "stable", ReleaseID: "demo@2.0.0"}
	if _, err := s.SetChannel(ctx, change); !errors.Is(err, store.ErrYanked) {
		t.Fatalf("channel to yanked: %v", err)
	}
	if _, _, err := s.Publish(ctx, NewRelease(alice, "demo", "2.0.0", Digest(2), "stable")); !errors.Is(err, store.ErrYanked) {
		t.Fatalf("republish yanked: %v", err)
	}
	change.ReleaseID = "demo@1.0.0"
	if _, err := s.SetChannel(ctx, change); err != nil {
		t.Fatal(err)
	}
	publish(t, s, NewRelease(alice, "other", "1.0.0", Digest(3), "stable"))
	if _, err := s.SetChannel(ctx, store.ChannelChange{By: alice, PluginID: "other", Channel: "stable", ReleaseID: "demo@1.0.0"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("channel to another plugin's release: %v", err)
	}
	if _, err := s.SetChannel(ctx, store.ChannelChange{By: alice, PluginID: "nope", Channel: "stable", ReleaseID: "demo@1.0.0"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("channel of an unknown plugin: %v", err)
	}
	if _, err := s.SetYanked(ctx, alice, "nope@1", true); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("yank unknown: %v", err)
	}
	cat, err := s.Catalog(ctx, store.CatalogQuery{PluginID: "demo"})
	if err != nil || len(cat) != 1 || cat[0].Channels["stable"] != "demo@1.0.0" || len(cat[0].Releases) != 2 {
		t.Fatalf("catalog: %+v %v", cat, err)
	}
	if _, err := s.SetYanked(ctx, alice, "demo@1.0.0", true); err != nil {
		t.Fatal(err)
	}
	cat, _ = s.Catalog(ctx, store.CatalogQuery{PluginID: "demo"})
	if len(cat[0].Channels) != 0 {
		t.Fatalf("a channel on a yanked release is listed: %v", cat[0].Channels)
	}
	if rel, err := s.SetYanked(ctx, alice, "demo@1.0.0", false); err != nil || rel.Yanked {
		t.Fatalf("unyank: %+v %v", rel, err)
	}
	if got, err := s.Channel(ctx, "demo", "stable"); err != nil || got.ID != "demo@1.0.0" {
		t.Fatalf("channel after unyank: %+v %v", got, err)
	}
}

func testFirstPublisherOwns(t *testing.T, s store.Store) {
	ctx := context.Background()
	publish(t, s, NewRelease(alice, "alpha", "1.0.0", Digest(1), "stable"))
	if owners, err := s.Owners(ctx, "alpha"); err != nil || !slices.Equal(owners, []string{"alice"}) {
		t.Fatalf("owners: %v %v", owners, err)
	}
	// Bob takes nothing: no new version, no republish, no channel, no yank.
	for _, r := range []store.NewRelease{
		NewRelease(bob, "alpha", "6.6.6", Digest(6), "stable"),
		NewRelease(bob, "alpha", "1.0.0", Digest(1), "evil"),
	} {
		if _, _, err := s.Publish(ctx, r); !errors.Is(err, store.ErrNotOwner) {
			t.Fatalf("publish by another identity: %v, want ErrNotOwner", err)
		}
	}
	if _, err := s.SetChannel(ctx, store.ChannelChange{By: bob, PluginID: "alpha", Channel: "stable", ReleaseID: "alpha@1.0.0"}); !errors.Is(err, store.ErrNotOwner) {
		t.Fatalf("channel by another identity: %v", err)
	}
	if _, err := s.SetYanked(ctx, bob, "alpha@1.0.0", true); !errors.Is(err, store.ErrNotOwner) {
		t.Fatalf("yank by another identity: %v", err)
	}
	if _, err := s.Release(ctx, "alpha@6.6.6"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused publish left a release: %v", err)
	}
	cat, _ := s.Catalog(ctx, store.CatalogQuery{PluginID: "alpha"})
	if len(cat) != 1 || len(cat[0].Channels) != 1 || cat[0].Releases[0].Yanked {
		t.Fatalf("a refused write changed the plugin: %+v", cat)
	}
	// The admin may do everything, and does not become an owner.
	publish(t, s, NewRelease(admin, "alpha", "1.1.0", Digest(2), "beta"))
	if _, err := s.SetYanked(ctx, admin, "alpha@1.1.0", true); err != nil {
		t.Fatal(err)
	}
	if owners, _ := s.Owners(ctx, "alpha"); !slices.Equal(owners, []string{"alice"}) {
		t.Fatalf("owners after admin writes: %v", owners)
	}
	if _, err := s.Owners(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("owners of an unknown plugin: %v", err)
	}
}

func testOwnerChanges(t *testing.T, s store.Store) {
	ctx := context.Background()
	publish(t, s, NewRelease(alice, "alpha", "1.0.0", Digest(1), "stable"))
	check := func(op store.OwnerOp, id string, want ...string) {
		t.Helper()
		owners, err := s.ChangeOwners(ctx, "alpha", op, id)
		if err != nil || !slices.Equal(owners, want) {
			t.Fatalf("%s %s: %v %v, want %v", op, id, owners, err, want)
		}
	}
	check(store.Grant, "bob", "alice", "bob")
	check(store.Grant, "bob", "alice", "bob") // idempotent
	publish(t, s, NewRelease(bob, "alpha", "2.0.0", Digest(2), "stable"))
	check(store.Revoke, "alice", "bob")
	check(store.Revoke, "carol", "bob") // revoking a non-owner changes nothing
	if _, _, err := s.Publish(ctx, NewRelease(alice, "alpha", "3.0.0", Digest(3), "stable")); !errors.Is(err, store.ErrNotOwner) {
		t.Fatalf("publish after revoke: %v", err)
	}
	check(store.Grant, "alice", "alice", "bob")
	check(store.Transfer, "carol", "carol")
	if _, err := s.SetYanked(ctx, bob, "alpha@1.0.0", true); !errors.Is(err, store.ErrNotOwner) {
		t.Fatalf("yank after transfer: %v", err)
	}
	if _, err := s.SetYanked(ctx, store.Actor{Identity: "carol"}, "alpha@1.0.0", true); err != nil {
		t.Fatalf("yank by the new owner: %v", err)
	}
	if _, err := s.ChangeOwners(ctx, "nope", store.Grant, "bob"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("grant on an unknown plugin: %v", err)
	}
	before, _ := s.Owners(ctx, "alpha")
	if _, err := s.ChangeOwners(ctx, "alpha", store.OwnerOp("adopt"), "dave"); err == nil {
		t.Fatal("an unknown owner operation was accepted")
	}
	if after, _ := s.Owners(ctx, "alpha"); !slices.Equal(before, after) {
		t.Fatalf("a refused owner operation changed the owners: %v, then %v", before, after)
	}
}

func testOwnerless(t *testing.T, s store.Store) {
	ctx := context.Background()
	publish(t, s, NewRelease(alice, "orphan", "1.0.0", Digest(1), "stable"))
	if owners, err := s.ChangeOwners(ctx, "orphan", store.Revoke, "alice"); err != nil || len(owners) != 0 {
		t.Fatalf("revoke the last owner: %v %v", owners, err)
	}
	for _, who := range []store.Actor{alice, bob} {
		if _, _, err := s.Publish(ctx, NewRelease(who, "orphan", "2.0.0", Digest(2), "stable")); !errors.Is(err, store.ErrNotOwner) {
			t.Fatalf("%s publishes to an ownerless plugin: %v", who.Identity, err)
		}
	}
	publish(t, s, NewRelease(admin, "orphan", "2.0.0", Digest(2), "stable"))
	if owners, _ := s.Owners(ctx, "orphan"); len(owners) != 0 {
		t.Fatalf("an admin publish claimed an existing plugin: %v", owners)
	}
	if _, err := s.ChangeOwners(ctx, "orphan", store.Transfer, "bob"); err != nil {
		t.Fatal(err)
	}
	publish(t, s, NewRelease(bob, "orphan", "3.0.0", Digest(3), "stable"))
}

func testConcurrentClaims(t *testing.T, s store.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			who := store.Actor{Identity: fmt.Sprintf("p%02d", i)}
			_, _, errs[i] = s.Publish(ctx, NewRelease(who, "contested", fmt.Sprintf("1.0.%d", i), Digest(i), "stable"))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrNotOwner):
			t.Errorf("unexpected error: %v", err)
		}
	}
	owners, err := s.Owners(ctx, "contested")
	if won != 1 || err != nil || len(owners) != 1 {
		t.Fatalf("%d publishers won, owners %v %v", won, owners, err)
	}
}

func testConcurrentPublishes(t *testing.T, s store.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, conflicts := 0, 0
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, _, err := s.Publish(ctx, NewRelease(alice, fmt.Sprintf("p%d", i), "1.0.0", Digest(i), "stable")); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			_, c, err := s.Publish(ctx, NewRelease(alice, "same", "1.0.0", Digest(100+i%2), "stable"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, store.ErrConflict):
				conflicts++
			case err != nil:
				t.Error(err)
			case c:
				created++
			}
		}()
	}
	wg.Wait()
	cat, _ := s.Catalog(ctx, store.CatalogQuery{Limit: 100})
	if len(cat) != 21 || created != 1 || conflicts == 0 {
		t.Fatalf("plugins=%d created=%d conflicts=%d", len(cat), created, conflicts)
	}
}

func testQuotas(t *testing.T, s store.Store) {
	ctx := context.Background()
	r := func(version string, n int, channel string) store.NewRelease {
		nr := NewRelease(alice, "q", version, Digest(n), channel)
		nr.MaxReleases, nr.MaxChannels = 2, 2
		return nr
	}
	publish(t, s, r("1", 1, "stable"))
	publish(t, s, r("2", 2, "beta"))
	publish(t, s, r("2", 2, "beta")) // idempotent: no new release, no new channel
	publish(t, s, r("1", 1, "beta")) // an existing channel moves freely
	var qe *store.QuotaError
	if _, _, err := s.Publish(ctx, r("3", 3, "stable")); !errors.As(err, &qe) || qe.Quota != "releases" || qe.Max != 2 || !errors.Is(err, store.ErrQuota) {
		t.Fatalf("third release: %v", err)
	}
	if _, _, err := s.Publish(ctx, r("2", 2, "nightly")); !errors.As(err, &qe) || qe.Quota != "channels" {
		t.Fatalf("third channel: %v", err)
	}
	if _, err := s.SetChannel(ctx, store.ChannelChange{By: alice, PluginID: "q", Channel: "edge", ReleaseID: "q@1", MaxChannels: 2}); !errors.As(err, &qe) || qe.Quota != "channels" {
		t.Fatalf("third channel by SetChannel: %v", err)
	}
	if _, err := s.SetChannel(ctx, store.ChannelChange{By: alice, PluginID: "q", Channel: "stable", ReleaseID: "q@2", MaxChannels: 2}); err != nil {
		t.Fatal(err)
	}
	cat, _ := s.Catalog(ctx, store.CatalogQuery{PluginID: "q"})
	if len(cat[0].Releases) != 2 || len(cat[0].Channels) != 2 {
		t.Fatalf("a refused write left something: %+v", cat[0])
	}
}

// snapshot is everything a publish may change: the catalog (plugins,
// releases with their yanked flags, channels) and every plugin's owners.
func snapshot(t *testing.T, s store.Store) string {
	t.Helper()
	ctx := context.Background()
	cat, err := s.Catalog(ctx, store.CatalogQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := fmt.Sprintf("%+v", cat)
	for _, p := range cat {
		owners, err := s.Owners(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("\n%s: %v", p.ID, owners)
	}
	return out
}

// sameOutcome reports whether err is want: nil, the same *QuotaError, or
// matching the sentinel want.
func sameOutcome(err, want error) bool {
	var qe, wantQE *store.QuotaError
	switch {
	case want == nil:
		return err == nil
	case errors.As(want, &wantQE):
		return errors.As(err, &qe) && *qe == *wantQE
	}
	return errors.Is(err, want)
}

// testCheckPublish: CheckPublish returns what Publish then returns, for
// every refusal and for acceptance, and writes nothing, not even the
// claim of a new plugin.
func testCheckPublish(t *testing.T, s store.Store) {
	ctx := context.Background()
	r := func(by store.Actor, plugin, version string, n int, channel string) store.NewRelease {
		nr := NewRelease(by, plugin, version, Digest(n), channel)
		nr.MaxReleases, nr.MaxChannels = 3, 2
		return nr
	}
	releases := &store.QuotaError{Quota: "releases", Max: 3}
	channels := &store.QuotaError{Quota: "channels", Max: 2}
	for _, c := range []struct {
		name string
		nr   store.NewRelease
		want error
	}{
		{"a new plugin", r(alice, "q", "1", 1, "stable"), nil},
		{"a new release", r(alice, "q", "2", 2, "stable"), nil},
		{"the same release again", r(alice, "q", "2", 2, "stable"), nil},
		{"a new channel", r(alice, "q", "1", 1, "beta"), nil},
		{"another identity", r(bob, "q", "3", 3, "stable"), store.ErrNotOwner},
		{"another identity, the same release", r(bob, "q", "1", 1, "stable"), store.ErrNotOwner},
		{"another digest", r(alice, "q", "1", 9, "stable"), store.ErrConflict},
		{"an admin", r(admin, "q", "3", 3, "beta"), nil},
		{"a release beyond the quota", r(alice, "q", "4", 4, "stable"), releases},
		{"not the owner beyond the quota", r(bob, "q", "4", 4, "stable"), store.ErrNotOwner},
		{"a channel beyond the quota", r(alice, "q", "2", 2, "nightly"), channels},
		{"a release and a channel beyond the quotas", r(alice, "q", "4", 4, "nightly"), releases},
		{"an existing channel at the quota", r(alice, "q", "3", 3, "stable"), nil},
		{"another plugin", r(bob, "other", "1", 5, "stable"), nil},
	} {
		before := snapshot(t, s)
		checked := s.CheckPublish(ctx, c.nr)
		if after := snapshot(t, s); after != before {
			t.Fatalf("%s: CheckPublish wrote: before\n%s\nafter\n%s", c.name, before, after)
		}
		_, _, published := s.Publish(ctx, c.nr)
		if !sameOutcome(checked, c.want) || !sameOutcome(published, c.want) {
			t.Fatalf("%s: CheckPublish %v, Publish %v, want %v", c.name, checked, published, c.want)
		}
	}
	if _, err := s.SetYanked(ctx, alice, "q@1", true); err != nil {
		t.Fatal(err)
	}
	nr := r(alice, "q", "1", 1, "stable")
	if err := s.CheckPublish(ctx, nr); !errors.Is(err, store.ErrYanked) {
		t.Fatalf("a yanked release: CheckPublish %v, want ErrYanked", err)
	}
	if _, _, err := s.Publish(ctx, nr); !errors.Is(err, store.ErrYanked) {
		t.Fatalf("a yanked release: Publish %v, want ErrYanked", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.CheckPublish(cancelled, r(alice, "q", "5", 6, "stable")); err == nil {
		t.Fatal("CheckPublish with a cancelled context succeeded")
	}
}

func testCatalogPages(t *testing.T, s store.Store) {
	ctx := context.Background()
	if cat, err := s.Catalog(ctx, store.CatalogQuery{Limit: 10}); err != nil || cat == nil || len(cat) != 0 {
		t.Fatalf("empty catalog: %#v %v", cat, err)
	}
	var ids []string
	for i := range 7 {
		id := fmt.Sprintf("plugin-%d", i)
		ids = append(ids, id)
		publish(t, s, NewRelease(alice, id, "1.0.0", Digest(2*i), "stable"))
		publish(t, s, NewRelease(alice, id, "2.0.0", Digest(2*i+1), "beta"))
	}
	var got []string
	after := ""
	for range 10 {
		page, err := s.Catalog(ctx, store.CatalogQuery{After: after, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, p := range page {
			got = append(got, p.ID)
			if len(p.Releases) != 2 || p.Releases[0].Version != "2.0.0" || p.Channels["stable"] != p.ID+"@1.0.0" || p.Channels["beta"] != p.ID+"@2.0.0" {
				t.Fatalf("entry %+v", p)
			}
		}
		after = page[len(page)-1].ID
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("pages gave %v, want %v", got, ids)
	}
	one, err := s.Catalog(ctx, store.CatalogQuery{PluginID: "plugin-3"})
	if err != nil || len(one) != 1 || one[0].ID != "plugin-3" || len(one[0].Releases) != 2 {
		t.Fatalf("one plugin: %+v %v", one, err)
	}
	if none, err := s.Catalog(ctx, store.CatalogQuery{PluginID: "nope"}); err != nil || len(none) != 0 {
		t.Fatalf("unknown plugin: %+v %v", none, err)
	}
}

func report(reporter, id, plugin, status string) distribution.Installation {
	return distribution.Installation{
		Reporter: reporter, ID: id, PluginID: plugin, ReleaseID: plugin + "@1.0.0",
		ArtifactDigest: Digest(1), Status: status, Host: "h", ReportedAt: time.Unix(1700000000, 0).UTC(),
	}
}

func testInstallations(t *testing.T, s store.Store) {
	ctx := context.Background()
	publish(t, s, NewRelease(alice, "demo", "1.0.0", Digest(1), "stable"))
	publish(t, s, NewRelease(alice, "other", "1.0.0", Digest(2), "stable"))
	for _, in := range []distribution.Installation{
		report("r1", "a", "demo", "installed"),
		report("r1", "b", "other", "installed"),
		report("r1", "a", "demo", "updated"),   // replaces r1's a
		report("r2", "a", "demo", "installed"), // another reporter's a is another record
	} {
		if err := s.PutInstallation(ctx, in, 2); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := s.Installations(ctx, store.InstallationQuery{Limit: 10})
	demo, _ := s.Installations(ctx, store.InstallationQuery{PluginID: "demo", Limit: 10})
	if len(all) != 3 || len(demo) != 2 || demo[0].Reporter != "r1" || demo[0].Status != "updated" || demo[1].Reporter != "r2" ||
		!demo[0].ReportedAt.Equal(time.Unix(1700000000, 0)) {
		t.Fatalf("all=%+v demo=%+v", all, demo)
	}
	var qe *store.QuotaError
	if err := s.PutInstallation(ctx, report("r3", "a", "demo", "installed"), 2); !errors.As(err, &qe) || qe.Quota != "installations" {
		t.Fatalf("a third report of demo: %v", err)
	}
	if err := s.PutInstallation(ctx, report("r2", "a", "demo", "removed"), 2); err != nil {
		t.Fatalf("replacing a report at the quota: %v", err)
	}
	if err := s.PutInstallation(ctx, report("r1", "x", "nope", "installed"), 2); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("report of an unknown plugin: %v", err)
	}
}

func testInstallationPages(t *testing.T, s store.Store) {
	ctx := context.Background()
	var want []store.InstallationKey
	for _, plugin := range []string{"a", "b"} {
		publish(t, s, NewRelease(alice, plugin, "1.0.0", Digest(len(plugin)+int(plugin[0])), "stable"))
		for _, reporter := range []string{"r1", "r2"} {
			for i := range 3 {
				id := fmt.Sprintf("%s/i%d", plugin, i)
				if err := s.PutInstallation(ctx, report(reporter, id, plugin, "installed"), 0); err != nil {
					t.Fatal(err)
				}
				want = append(want, store.InstallationKey{PluginID: plugin, Reporter: reporter, ID: id})
			}
		}
	}
	list := func(plugin string) []store.InstallationKey {
		var got []store.InstallationKey
		var after *store.InstallationKey
		for range 20 {
			page, err := s.Installations(ctx, store.InstallationQuery{PluginID: plugin, After: after, Limit: 4})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				return got
			}
			for _, in := range page {
				got = append(got, store.InstallationKey{PluginID: in.PluginID, Reporter: in.Reporter, ID: in.ID})
			}
			after = &got[len(got)-1]
		}
		t.Fatal("pages never end")
		return nil
	}
	if got := list(""); !slices.Equal(got, want) {
		t.Fatalf("all pages: %v, want %v", got, want)
	}
	if got := list("b"); !slices.Equal(got, want[6:]) {
		t.Fatalf("pages of b: %v, want %v", got, want[6:])
	}
}

// BenchmarkPublish publishes b.N new plugins, 8 at a time as
// bench/replicas.sh does over HTTP, so that the stores' share of a publish
// can be profiled and compared without the server around it. It also
// reports the CPU time of this process per publish (cpu-ns/op) where the
// system tells it.
func BenchmarkPublish(b *testing.B, s store.Store) {
	ctx := context.Background()
	run := time.Now().UnixNano()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu, ok := processCPU()
	defer func() {
		if end, _ := processCPU(); ok {
			b.ReportMetric(float64(end-cpu)/float64(b.N), "cpu-ns/op")
		}
	}()
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				r := NewRelease(alice, fmt.Sprintf("bench-%d-%d", run, i), "1.0.0", Digest(i), "stable")
				// As the server does: the read-only look first, then the
				// publish itself.
				if err := s.CheckPublish(ctx, r); err != nil {
					b.Errorf("check of a new plugin: %v", err)
					return
				}
				if _, _, err := s.Publish(ctx, r); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
