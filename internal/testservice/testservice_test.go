package testservice

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
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

// TestStartS3 checks the versitygw helper: a bucket created through the
// S3 API appears as a directory, and an object round-trips.
func TestStartS3(t *testing.T) {
	s := StartS3(t)
	bucket := s.NewBucket(t)
	if fi, err := os.Stat(filepath.Join(s.Dir, bucket)); err != nil || !fi.IsDir() {
		t.Fatalf("bucket directory: %v %v", fi, err)
	}
	c, err := minio.New(s.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Region: s.Region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.PutObject(ctx, bucket, "a/b", strings.NewReader("hello"), 5, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, bucket, "a", "b")); err != nil || string(b) != "hello" {
		t.Fatalf("object on disk: %q %v", b, err)
	}
	bad, _ := minio.New(s.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, "wrong", ""),
		Region: s.Region, BucketLookup: minio.BucketLookupPath})
	if _, err := bad.StatObject(ctx, bucket, "a/b", minio.StatObjectOptions{}); err == nil {
		t.Fatal("a wrong secret was accepted")
	}
}
