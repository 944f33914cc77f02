package testservice

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

func TestStartRegistry(t *testing.T) {
	r := StartRegistry(t)
	resp, err := http.Get("http://" + r.Host + "/v2/_catalog")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("catalog: %s", resp.Status)
	}
}

func TestBinaryMissing(t *testing.T) {
	t.Setenv(RequireEnv, "")
	ran := false
	t.Run("skips", func(t *testing.T) {
		defer func() { ran = true }()
		Binary(t, "plugkit-no-such-program", "nothing installs it")
		t.Fatal("Binary returned for a missing program")
	})
	if !ran {
		t.Fatal("subtest did not run")
	}
}

func TestStartPostgres(t *testing.T) {
	pg := StartPostgres(t)
	url := pg.NewDatabase(t)
	cmd := exec.Command("psql", url, "-tAc", "select 40+2")
	cmd.Env = append(env("PGPASSWORD"), "PGPASSWORD="+pg.Password)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "42" {
		t.Fatalf("query: %v %q", err, out)
	}
	// Without the password, TCP connections are refused.
	cmd = exec.Command("psql", url, "-tAc", "select 1")
	cmd.Env = append(env("PGPASSWORD"), "PGPASSWORD=wrong")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("wrong password accepted: %s", out)
	}
	pg.Stop(t)
	pg.Start(t)
	cmd = exec.Command("psql", url, "-tAc", "select 1")
	cmd.Env = append(env("PGPASSWORD"), "PGPASSWORD="+pg.Password)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("after restart: %v %s", err, out)
	}
}
