package registry

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plugkit/plugkit/distribution"
)

// spoolPrefix names the spool files, so that New sweeps only its own.
const spoolPrefix = "plugkit-upload-"

// prepareSpool creates the spool directory and removes what a crashed
// process left there. On Unix a file still being written by another
// process survives its unlinking, so the sweep never breaks an upload in
// flight.
func prepareSpool(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), spoolPrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

// busy is the answer when a slot semaphore is full.
func busy(w http.ResponseWriter, what string) error {
	w.Header().Set("Retry-After", "10")
	return &apiError{status: http.StatusServiceUnavailable, code: distribution.CodeBusy,
		msg: "every " + what + " slot is taken; retry later"}
}

// tryTake takes a slot of sem without waiting.
func tryTake(sem chan struct{}) (release func(), ok bool) {
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, true
	default:
		return nil, false
	}
}

// receive copies a publish body into a new spool file and returns the
// file's name; the caller removes it. The body must keep an average rate
// of MinUploadRate after UploadGrace (see pacedReader), and stay within the
// archive limit.
func (s *Server) receive(w http.ResponseWriter, r *http.Request) (string, error) {
	f, err := os.CreateTemp(s.cfg.SpoolDir, spoolPrefix+"*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	body := http.MaxBytesReader(w, r.Body, s.maxArchive)
	paced := &pacedReader{r: body, rc: http.NewResponseController(w), start: time.Now(),
		rate: s.cfg.MinUploadRate, grace: s.cfg.UploadGrace}
	_, err = io.Copy(f, paced)
	paced.rc.SetReadDeadline(time.Time{})
	// The write deadline was set when the request began; a body that
	// arrived slowly but legally may have outlived it, and the answer must
	// still go out.
	paced.rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		if paced.err != nil && paced.err != io.EOF {
			return "", s.uploadError(w, paced.err)
		}
		return "", err // writing the spool file failed: ours, a 500
	}
	return name, nil
}

// uploadError maps a failed body read onto its response: the client's
// fault in every case.
func (s *Server) uploadError(w http.ResponseWriter, err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return s.tooLarge()
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The connection's reads are over; say so and close it.
		w.Header().Set("Connection", "close")
		return &apiError{status: http.StatusRequestTimeout, code: distribution.CodeUploadTooSlow,
			msg: fmt.Sprintf("the body arrived slower than %d bytes/s", s.cfg.MinUploadRate)}
	}
	return badRequest(distribution.CodeBadRequest, "unreadable body")
}

// pacedReader enforces a minimum average rate on a request body: before
// each read it sets the connection's read deadline to start + grace +
// n/rate, where n is the bytes received so far. A client that keeps up
// always has about grace in hand; one that drips bytes runs out of it
// and its read fails with os.ErrDeadlineExceeded. Where the connection
// cannot take deadlines, the server's ReadTimeout still bounds the body.
type pacedReader struct {
	r     io.Reader
	rc    *http.ResponseController
	start time.Time
	n     int64
	rate  int64
	grace time.Duration
	err   error // the last read's error, to tell the body's failures from the spool's
}

func (p *pacedReader) Read(b []byte) (int, error) {
	owed := time.Duration(float64(p.n) / float64(p.rate) * float64(time.Second))
	p.rc.SetReadDeadline(p.start.Add(p.grace + owed))
	n, err := p.r.Read(b)
	p.n += int64(n)
	p.err = err
	return n, err
}
