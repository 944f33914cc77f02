package testservice

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3 is a versitygw S3-compatible server running for one test: plain HTTP
// on 127.0.0.1, buckets as directories of a temporary directory, one root
// key pair, connections kept alive between requests as S3 keeps them.
// Clients must use path-style addressing.
type S3 struct {
	// Endpoint is "127.0.0.1:PORT"; URL is "http://" + Endpoint.
	Endpoint, URL string
	// AccessKey and SecretKey are the root credentials; Region is the
	// server's region.
	AccessKey, SecretKey, Region string
	// Dir holds the buckets: bucket B's object K is the file Dir/B/K.
	Dir string
	*Process
}

// StartS3 starts versitygw for the test and stops it when the test ends.
// The credentials are passed in its environment, not its arguments.
func StartS3(t testing.TB) *S3 {
	t.Helper()
	bin := Binary(t, "versitygw", "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0")
	s := &S3{AccessKey: "plugkit-test", SecretKey: randomHex(t, 16), Region: "us-east-1", Dir: filepath.Join(t.TempDir(), "s3")}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s.Endpoint = fmt.Sprintf("127.0.0.1:%d", FreePort(t))
	s.URL = "http://" + s.Endpoint
	cmd := exec.Command(bin, "--port", s.Endpoint, "--region", s.Region, "--health", "/healthz", "--keep-alive", "posix", s.Dir)
	cmd.Env = append(env("ROOT_ACCESS_KEY_ID", "ROOT_SECRET_ACCESS_KEY", "ROOT_ACCESS_KEY", "ROOT_SECRET_KEY"),
		"ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	s.Process = Start(t, cmd, 20*time.Second, httpReady(s.URL+"/healthz", 200))
	return s
}

// NewBucket creates an empty bucket with a random name and returns it.
func (s *S3) NewBucket(t testing.TB) string {
	t.Helper()
	name := "t-" + randomHex(t, 6)
	c, err := minio.New(s.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Region:       s.Region,
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: s.Region}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return name
}

// Env is the AWS environment that points a client at the server.
func (s *S3) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + s.Region, "AWS_ENDPOINT_URL_S3=" + s.URL,
	}
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
