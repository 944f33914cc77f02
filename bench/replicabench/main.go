// Command replicabench drives the measurements of bench/replicas.sh that
// wrk cannot make: publish throughput, cross-replica propagation delay,
// seeding a large catalog, and catalog page latency.
//
//	replicabench publish URL N CONCURRENCY       N publishes of distinct plugins; publishes/s
//	replicabench propagate URL_A URL_B ROUNDS     yank/unyank on A, poll B; p50/p99 delay
//	replicabench seed DATABASE_URL N              N plugins straight into a PostgreSQL store
//	replicabench seed-sqlite DIR N                the same into DIR/registry.db
//	replicabench latency URL REQUESTS             GET the first catalog page; p50/p99
//
// The token is $PLUGKIT_TOKEN.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
	"github.com/plugkit/plugkit/registry/store/postgres"
	"github.com/plugkit/plugkit/registry/store/sqlite"
	"github.com/plugkit/plugkit/snapshot"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "replicabench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	num := func(i int) int {
		n, err := strconv.Atoi(args[i])
		if err != nil {
			fmt.Fprintf(os.Stderr, "replicabench: %q is not a number\n", args[i])
			os.Exit(2)
		}
		return n
	}
	ctx := context.Background()
	switch {
	case len(args) == 4 && args[0] == "publish":
		return publish(ctx, args[1], num(2), num(3))
	case len(args) == 4 && args[0] == "propagate":
		return propagate(ctx, args[1], args[2], num(3))
	case len(args) == 3 && args[0] == "seed":
		db, err := postgres.Open(ctx, args[1], postgres.Options{})
		if err != nil {
			return err
		}
		defer db.Close()
		return seed(ctx, db, num(2))
	case len(args) == 3 && args[0] == "seed-sqlite":
		if err := os.MkdirAll(args[1], 0o750); err != nil {
			return err
		}
		db, err := sqlite.Open(args[1] + "/registry.db")
		if err != nil {
			return err
		}
		defer db.Close()
		return seed(ctx, db, num(2))
	case len(args) == 3 && args[0] == "latency":
		return latency(ctx, args[1], num(2))
	}
	return fmt.Errorf("usage: see the package comment")
}

func pluginArchive(name, version string) ([]byte, error) {
	manifest := fmt.Sprintf(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": %q, "version": %q, "description": "bench"}`, name, version)
	s, err := snapshot.FromFiles(map[string][]byte{
		"plugin.json":           []byte(manifest),
		"skills/hello/SKILL.md": []byte("---\nname: hello\ndescription: Say hello.\n---\nSay hello.\n"),
	})
	if err != nil {
		return nil, err
	}
	return archive.Pack(s, archive.PackOptions{})
}

func client(url string) *distribution.Client {
	return &distribution.Client{BaseURL: url, Token: os.Getenv("PLUGKIT_TOKEN")}
}

// publish sends n publishes of distinct plugins, c at a time, and prints
// the rate.
func publish(ctx context.Context, url string, n, c int) error {
	arts := make([][]byte, n)
	run := time.Now().UnixNano()
	for i := range arts {
		var err error
		if arts[i], err = pluginArchive(fmt.Sprintf("pub-%d-%d", run, i), "1.0.0"); err != nil {
			return err
		}
	}
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := client(url)
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if _, err := cl.Publish(ctx, arts[i], ""); err != nil {
					failed.Add(1)
					fmt.Fprintln(os.Stderr, err)
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	fmt.Printf("%d publishes, %d concurrent: %.1f publishes/s (%d failed)\n", n, c, float64(n)/d.Seconds(), failed.Load())
	return nil
}

// propagate measures, rounds times, how long a yank (then an unyank) on A
// takes to show in resolve answers on B, polling B as fast as it answers.
func propagate(ctx context.Context, urlA, urlB string, rounds int) error {
	a, b := client(urlA), client(urlB)
	art, err := pluginArchive("propagation", "1.0.0")
	if err != nil {
		return err
	}
	if _, err := a.Publish(ctx, art, ""); err != nil {
		return err
	}
	q := distribution.ResolveQuery{PluginID: "propagation"}
	var delays []time.Duration
	for i := range rounds {
		yank := i%2 == 0
		if _, err := a.Yank(ctx, "propagation@1.0.0", yank); err != nil {
			return err
		}
		start := time.Now()
		for {
			_, err := b.Resolve(ctx, q)
			if (err != nil) == yank {
				break
			}
			if time.Since(start) > 5*time.Second {
				return fmt.Errorf("round %d: not seen on B after 5s", i)
			}
		}
		delays = append(delays, time.Since(start))
	}
	slices.Sort(delays)
	fmt.Printf("propagation A->B over %d changes: p50 %v, p99 %v, max %v\n", rounds,
		delays[len(delays)/2].Round(time.Microsecond), delays[len(delays)*99/100].Round(time.Microsecond), delays[len(delays)-1].Round(time.Microsecond))
	return nil
}

// seed publishes n plugins with one release each straight into st.
func seed(ctx context.Context, st store.Store, n int) error {
	start := time.Now()
	by := store.Actor{Identity: "seed"}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				id := fmt.Sprintf("seed-%06d", i)
				digest := fmt.Sprintf("sha256:%064x", i+1)
				_, _, err := st.Publish(ctx, store.NewRelease{Name: id, Channel: "stable", By: by, Release: distribution.Release{
					ID: distribution.ReleaseID(id, "1.0.0", digest), PluginID: id, Version: "1.0.0",
					Description: "a seeded plugin for the catalog benchmark", ArtifactDigest: digest, Size: 1000, PublishedAt: time.Now().UTC(),
				}})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	fmt.Fprintf(os.Stderr, "seeded %d plugins in %v\n", n, time.Since(start).Round(time.Millisecond))
	return nil
}

// latency times the first catalog page, sequentially.
func latency(ctx context.Context, url string, n int) error {
	c := client(url)
	var ds []time.Duration
	var entries int
	for range n {
		start := time.Now()
		page, err := c.CatalogPage(ctx, "")
		if err != nil {
			return err
		}
		ds = append(ds, time.Since(start))
		entries = len(page.Plugins)
	}
	// The first request, the server's first, is printed apart: on a
	// machine whose page faults are slow, it alone can set the p99 of a
	// few hundred, which still counts it.
	first := ds[0]
	slices.Sort(ds)
	fmt.Printf("catalog first page (%d plugins) over %d requests: p50 %v, p99 %v (first request %v, slowest %v)\n", entries, n,
		ds[len(ds)/2].Round(time.Microsecond), ds[len(ds)*99/100].Round(time.Microsecond),
		first.Round(time.Microsecond), ds[len(ds)-1].Round(time.Microsecond))
	return nil
}
