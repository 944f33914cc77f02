package postgres

import (
	"context"
	"testing"

	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/registry/store"
	"github.com/plugkit/plugkit/registry/store/storetest"
)

// cluster starts one PostgreSQL for the test and points PGPASSWORD at it:
// URLs carry no password, as in production.
func cluster(t *testing.T) *testservice.Postgres {
	t.Helper()
	pg := testservice.StartPostgres(t)
	t.Setenv("PGPASSWORD", pg.Password)
	return pg
}

func openTest(t *testing.T, pg *testservice.Postgres) *DB {
	t.Helper()
	db, err := Open(context.Background(), pg.NewDatabase(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	pg := cluster(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t, pg) })
}
