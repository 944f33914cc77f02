package serve

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/registry/blobs/s3"
	"github.com/plugkit/plugkit/registry/storage"
)

// storageFlags are the flags that say where a registry's data lives; serve,
// serve migrate and serve token share them.
type storageFlags struct {
	data, database, blobs            string
	s3Endpoint, s3Region, s3Addrness string
	s3Cache                          int64
}

// databaseEnv may hold the database URL, with its password: unlike
// --database, the environment is not visible to other users.
const databaseEnv = "PLUGKIT_DATABASE_URL"

func (f *storageFlags) register(cmd *cobra.Command, blobs bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.data, "data", "plugkit-data", "data directory (SQLite database, blobs, upload spool) for what is not elsewhere")
	fl.StringVar(&f.database, "database", "", "PostgreSQL URL postgres://USER@HOST:PORT/DB?… without password (default $"+databaseEnv+"; SQLite in --data when neither)")
	if blobs {
		fl.StringVar(&f.blobs, "blobs", "", "blob store s3://BUCKET/PREFIX (default: --data/blobs); credentials from AWS_* or the AWS shared files")
		fl.StringVar(&f.s3Endpoint, "s3-endpoint", "", "S3 endpoint URL (default $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS)")
		fl.StringVar(&f.s3Region, "s3-region", "", "S3 region (default $AWS_REGION, $AWS_DEFAULT_REGION, us-east-1)")
		fl.StringVar(&f.s3Addrness, "s3-addressing", "", "path or virtual (default: virtual-hosted for AWS, path-style for others)")
		fl.Int64Var(&f.s3Cache, "s3-cache-bytes", s3.DefaultCacheBytes, "memory for recently used blobs, each at most an eighth of it (negative: none)")
	}
}

// config is the storage the flags name. A URL given with --database must
// not hold a password (argv is visible to every user of the machine).
func (f *storageFlags) config(cmd *cobra.Command) (storage.Config, error) {
	cfg := storage.Config{
		DataDir:     f.data,
		DatabaseURL: f.database,
		BlobsURL:    f.blobs,
		S3: s3.Options{Endpoint: f.s3Endpoint, Region: f.s3Region, Addressing: s3.Addressing(f.s3Addrness),
			CacheBytes: f.s3Cache},
	}
	if cfg.DatabaseURL != "" {
		if err := storage.CheckURLHasNoPassword(cfg.DatabaseURL); err != nil {
			return cfg, command.Usage(errors.New("--database: " + err.Error()))
		}
	} else {
		cfg.DatabaseURL = os.Getenv(databaseEnv)
	}
	if cfg.DatabaseURL != "" && !storage.IsPostgresURL(cfg.DatabaseURL) {
		return cfg, command.Usage(errors.New("the database URL must start with postgres:// or postgresql://"))
	}
	if cfg.DatabaseURL != "" && cfg.BlobsURL != "" && !cmd.Flags().Changed("data") {
		cfg.DataDir = "" // a replica needs no local directory
	}
	if f.blobs == "" && (f.s3Endpoint != "" || f.s3Region != "" || f.s3Addrness != "" || cmd.Flags().Changed("s3-cache-bytes")) {
		return cfg, command.Usage(errors.New("the --s3-* flags need --blobs s3://BUCKET/PREFIX"))
	}
	return cfg, nil
}

// storageError is how a verb fails when its storage does not open: a
// registry that is not there means a wrong --data or --database (exit 2),
// a data directory another server holds is a refusal (exit 1), anything
// else is an I/O error.
func storageError(err error) error {
	switch {
	case errors.Is(err, storage.ErrNoRegistry):
		return command.Usage(fmt.Errorf("%w: give the --data or --database of a registry (plugkit serve and plugkit serve token add create one)", err))
	case errors.Is(err, storage.ErrInUse):
		return command.Failed(fmt.Errorf("%w: stop that plugkit serve first, or give another --data", err))
	}
	return command.Usage(err)
}
