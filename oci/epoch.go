package oci

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// SourceDateEpoch reads the SOURCE_DATE_EPOCH environment variable
// (reproducible-builds.org): the zero time when it is unset or empty, so
// that Build writes no created annotation, and an error when it is not a
// non-negative integer number of seconds.
func SourceDateEpoch() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want a non-negative number of seconds", v)
	}
	return time.Unix(n, 0).UTC(), nil
}
