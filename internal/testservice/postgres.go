package testservice

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// pgBinDirs are where Debian installs the PostgreSQL server programs.
var pgBinDirs = []string{"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"}

// Postgres is a throwaway PostgreSQL cluster running for one test: TCP on
// 127.0.0.1 with password (SCRAM) authentication, a Unix socket in its own
// directory, data in a temporary directory removed at the end.
type Postgres struct {
	// Host and Port are where it listens.
	Host string
	Port int
	// User is the superuser, Password its password. URLs handed to the
	// code under test should carry no password (plugkit reads it from
	// PGPASSWORD or .pgpass), so it is kept apart.
	User, Password string

	dir, bin string
	asUser   []string // runuser prefix when the tests run as root
	uid, gid int      // the cluster's owner, when running as root
}

// StartPostgres initialises and starts a cluster for the test and stops it
// (and deletes its files) when the test ends. As root, the cluster runs as
// the postgres user, as PostgreSQL requires.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bin := pgBin(t)
	p := &Postgres{Host: "127.0.0.1", User: "postgres", bin: bin}
	pw := make([]byte, 12)
	if _, err := rand.Read(pw); err != nil {
		t.Fatal(err)
	}
	p.Password = hex.EncodeToString(pw)

	// t.TempDir is private to root; the cluster's owner needs its own.
	dir, err := os.MkdirTemp("", "plugkit-pg-*")
	if err != nil {
		t.Fatal(err)
	}
	p.dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs a postgres user to own the cluster: %v", err)
		}
		p.uid, _ = strconv.Atoi(u.Uid)
		p.gid, _ = strconv.Atoi(u.Gid)
		if err := os.Chown(dir, p.uid, p.gid); err != nil {
			t.Fatal(err)
		}
		p.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(p.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.chown(pwfile)
	out, err := p.command("initdb", "-D", p.dataDir(), "-U", p.User, "--pwfile", pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C").CombinedOutput()
	if err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	p.Port = FreePort(t)
	for attempt := 1; ; attempt++ {
		err := p.pgctlStart()
		if err == nil {
			break
		}
		if attempt == 3 {
			t.Fatal(err)
		}
		p.Port = FreePort(t) // lost the port to another process: try another
	}
	t.Cleanup(func() { _ = p.command("pg_ctl", "-D", p.dataDir(), "stop", "-m", "immediate", "-w").Run() })
	return p
}

// pgBin finds the directory of initdb and pg_ctl.
func pgBin(t testing.TB) string {
	for _, d := range pgBinDirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d
		}
	}
	return filepath.Dir(Binary(t, "pg_ctl", "apt-get install postgresql"))
}

func (p *Postgres) dataDir() string { return filepath.Join(p.dir, "data") }

// chown gives a file to the cluster's owner when running as root.
func (p *Postgres) chown(path string) {
	if len(p.asUser) > 0 {
		_ = os.Chown(path, p.uid, p.gid)
	}
}

func (p *Postgres) command(prog string, args ...string) *exec.Cmd {
	argv := append(append([]string{}, p.asUser...), append([]string{filepath.Join(p.bin, prog)}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env("PGPASSWORD", "PGHOST", "PGPORT", "PGUSER", "PGDATABASE")
	return cmd
}

// Stop stops the server immediately (as a crash would) and Start starts it
// again on the same port: tests use them to check that clients recover.
func (p *Postgres) Stop(t testing.TB) {
	t.Helper()
	if out, err := p.command("pg_ctl", "-D", p.dataDir(), "stop", "-m", "immediate", "-w").CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// Start starts a stopped server on its old port.
func (p *Postgres) Start(t testing.TB) {
	t.Helper()
	if err := p.pgctlStart(); err != nil {
		t.Fatal(err)
	}
}

// pgctlStart starts the server on p.Port and waits until it accepts
// connections. Durability is off: the cluster dies with the test.
func (p *Postgres) pgctlStart() error {
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", p.Port, p.dir)
	logPath := filepath.Join(p.dir, "log")
	if out, err := p.command("pg_ctl", "-D", p.dataDir(), "-l", logPath, "-o", opts, "-w", "-t", "30", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// NewDatabase creates an empty database and returns its URL, without the
// password (set PGPASSWORD to p.Password, or use URLWithPassword).
func (p *Postgres) NewDatabase(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := "t_" + hex.EncodeToString(b)
	out, err := p.command("psql", "-h", p.dir, "-p", strconv.Itoa(p.Port), "-U", p.User, "-d", "postgres",
		"-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE "+name).CombinedOutput()
	if err != nil {
		// psql is in the client package; fall back to the one in PATH.
		cmd := exec.Command("psql", "-h", p.dir, "-p", strconv.Itoa(p.Port), "-U", p.User, "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE "+name)
		cmd.Env = append(env("PGPASSWORD"), "PGPASSWORD="+p.Password)
		if out2, err2 := cmd.CombinedOutput(); err2 != nil {
			t.Fatalf("create database: %v\n%s\n%s", err2, out, out2)
		}
	}
	return p.URL(name)
}

// URL is the URL of database name, without the password.
func (p *Postgres) URL(name string) string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", p.User, net.JoinHostPort(p.Host, strconv.Itoa(p.Port)), name)
}

// URLWithPassword is the URL of database name with the password in it.
func (p *Postgres) URLWithPassword(name string) string {
	return fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", p.User, p.Password, net.JoinHostPort(p.Host, strconv.Itoa(p.Port)), name)
}
