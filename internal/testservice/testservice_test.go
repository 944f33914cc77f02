package testservice

import (
	"net/http"
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
