package sqlite

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/sqlite/lib"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// The lookups by key that every resolve and artifact download makes
// (Channel, Release, HasArtifact) do not go through database/sql: its
// driver path cost two thirds of an uncached resolve in allocations,
// interface conversions, a goroutine handoff per statement and column
// names read back on every row. They run on connections of their own,
// opened with SQLite's C API (the same library the driver wraps), each
// used by one goroutine at a time, with its statements prepared once.
// Every lookup is one statement in SQLite's implicit read transaction, so
// it sees every write committed before it: nothing is cached.
//
// A lookup's read transaction is not ended when the lookup returns, but
// when the next lookup has begun its own (hold). Beginning and ending a
// read transaction take and drop a POSIX lock on the WAL index, two fcntl
// calls that were two thirds of a lookup's CPU in process (about 8 against
// 2.5 us); SQLite skips them while another connection of the process
// holds the same lock, which the held transaction does. The held
// transaction only keeps that lock: no lookup reads from it. It ends after
// linger without lookups, and while this process writes (beginWrite), so
// that the checkpoint after a commit is not held back by a held snapshot
// older than the commit.

// pointConn is one read connection with the point lookups prepared.
type pointConn struct {
	tls *libc.TLS
	db  uintptr
	// channel, release, hasArtifact are the prepared statements, in
	// pointSQL's order.
	stmts [3]uintptr
	// arg is C memory that holds the text parameters of one lookup; SQLite
	// reads them in place (SQLITE_STATIC) until the statement is reset.
	arg    uintptr
	argCap int
}

// The statements of a pointConn, by index.
const (
	pointChannel = iota
	pointRelease
	pointHasArtifact
)

// pointSQL are the point lookups' statements.
var pointSQL = [...]string{
	pointChannel: `SELECT ` + releaseColumns + `
		FROM channels c JOIN releases r ON r.id = c.release_id
		WHERE c.plugin_id = ? AND c.name = ? AND r.yanked = 0`,
	pointRelease:     `SELECT ` + releaseColumns + ` FROM releases r WHERE r.id = ?`,
	pointHasArtifact: `SELECT 1 FROM releases WHERE digest = ? LIMIT 1`,
}

// pointPool holds the point connections; a lookup takes one and gives it
// back, waiting when all are in use.
type pointPool struct {
	free chan *pointConn
	n    int

	mu sync.Mutex
	// held is the connection of the last lookup, still in the read
	// transaction of its statement heldIn.
	held   *pointConn
	heldIn int
	// touched is whether a lookup ended since timer last fired.
	touched bool
	// noHold counts the reasons not to hold a transaction: this process's
	// writes in progress, and Close.
	noHold int
	timer  *time.Timer
}

// linger is how long a held read transaction outlives the last lookup.
const linger = time.Millisecond

// openPoints opens n point connections to the database at path, which
// Open has already created and migrated.
func openPoints(path string, n int) (*pointPool, error) {
	p := &pointPool{free: make(chan *pointConn, n)}
	p.timer = time.AfterFunc(linger, p.expire)
	p.timer.Stop()
	for range n {
		c, err := openPoint(path)
		if err != nil {
			p.close()
			return nil, err
		}
		p.free <- c
		p.n++
	}
	return p, nil
}

// openPoint opens one connection in SQLite's multi-thread mode (no
// per-connection mutex: the pool hands it to one goroutine at a time),
// read-only by query_only like the reader pool, and prepares pointSQL.
func openPoint(path string) (c *pointConn, err error) {
	c = &pointConn{tls: libc.NewTLS()}
	defer func() {
		if err != nil {
			c.close()
			err = fmt.Errorf("sqlite: open %s: %w", path, err)
		}
	}()
	name, err := libc.CString(path)
	if err != nil {
		return c, err
	}
	defer libc.Xfree(c.tls, name)
	pdb := c.tls.Alloc(int(unsafe.Sizeof(uintptr(0))))
	defer c.tls.Free(int(unsafe.Sizeof(uintptr(0))))
	rc := lib.Xsqlite3_open_v2(c.tls, name, pdb, lib.SQLITE_OPEN_READWRITE|lib.SQLITE_OPEN_NOMUTEX, 0)
	c.db = *(*uintptr)(cMem(pdb))
	if rc != lib.SQLITE_OK {
		return c, c.error(rc)
	}
	lib.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	if rc := lib.Xsqlite3_busy_timeout(c.tls, c.db, 10000); rc != lib.SQLITE_OK {
		return c, c.error(rc)
	}
	if err := c.exec(`PRAGMA query_only = 1`); err != nil {
		return c, err
	}
	for i, text := range pointSQL {
		if c.stmts[i], err = c.prepare(text); err != nil {
			return c, err
		}
	}
	return c, nil
}

// prepare compiles one statement, kept for the connection's life.
func (c *pointConn) prepare(text string) (uintptr, error) {
	z, err := libc.CString(text)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(c.tls, z)
	pstmt := c.tls.Alloc(int(unsafe.Sizeof(uintptr(0))))
	defer c.tls.Free(int(unsafe.Sizeof(uintptr(0))))
	if rc := lib.Xsqlite3_prepare_v3(c.tls, c.db, z, -1, lib.SQLITE_PREPARE_PERSISTENT, pstmt, 0); rc != lib.SQLITE_OK {
		return 0, c.error(rc)
	}
	return *(*uintptr)(cMem(pstmt)), nil
}

// exec runs one statement that returns no rows.
func (c *pointConn) exec(text string) error {
	s, err := c.prepare(text)
	if err != nil {
		return err
	}
	defer lib.Xsqlite3_finalize(c.tls, s)
	if rc := lib.Xsqlite3_step(c.tls, s); rc != lib.SQLITE_DONE && rc != lib.SQLITE_ROW {
		return c.error(rc)
	}
	return nil
}

// error is SQLite's message for rc on this connection.
func (c *pointConn) error(rc int32) error {
	msg := "out of memory"
	if c.db != 0 {
		msg = libc.GoString(lib.Xsqlite3_errmsg(c.tls, c.db))
	}
	return fmt.Errorf("sqlite: %s (%d)", msg, rc)
}

func (c *pointConn) close() error {
	var err error
	for _, s := range c.stmts {
		lib.Xsqlite3_finalize(c.tls, s) // a no-op on 0
	}
	if c.db != 0 {
		if rc := lib.Xsqlite3_close_v2(c.tls, c.db); rc != lib.SQLITE_OK {
			err = c.error(rc)
		}
	}
	if c.arg != 0 {
		libc.Xfree(c.tls, c.arg)
	}
	c.tls.Close()
	return err
}

// query binds args to statement i and steps it once: found is whether it
// returned a row, which the caller reads before calling c.done.
func (c *pointConn) query(i int, args ...string) (found bool, err error) {
	s := c.stmts[i]
	size := 1 // never 0: SQLite binds a NULL pointer as NULL, not as ''
	for _, a := range args {
		size += len(a)
	}
	if size > c.argCap {
		p := libc.Xrealloc(c.tls, c.arg, libc.Tsize_t(size))
		if p == 0 {
			return false, errors.New("sqlite: out of memory")
		}
		c.arg, c.argCap = p, size
	}
	at := c.arg
	for j, a := range args {
		copy(unsafe.Slice((*byte)(cMem(at)), len(a)), a)
		// SQLITE_STATIC (0): the text stays in c.arg until done.
		if rc := lib.Xsqlite3_bind_text(c.tls, s, int32(j+1), at, int32(len(a)), 0); rc != lib.SQLITE_OK {
			c.done(i)
			return false, c.error(rc)
		}
		at += uintptr(len(a))
	}
	switch rc := lib.Xsqlite3_step(c.tls, s); rc {
	case lib.SQLITE_ROW:
		return true, nil
	case lib.SQLITE_DONE:
		return false, nil
	default:
		err := c.error(rc)
		c.done(i)
		return false, err
	}
}

// done resets statement i, which ends its read transaction.
func (c *pointConn) done(i int) { lib.Xsqlite3_reset(c.tls, c.stmts[i]) }

// release reads the row statement i stands on, of releaseColumns. Its
// five text columns share one allocation.
func (c *pointConn) release(i int) distribution.Release {
	s := c.stmts[i]
	const texts = 5 // id, plugin_id, version, description, digest
	var ptr [texts]uintptr
	var n [texts]int
	total := 0
	for col := range texts {
		ptr[col] = lib.Xsqlite3_column_text(c.tls, s, int32(col))
		n[col] = int(lib.Xsqlite3_column_bytes(c.tls, s, int32(col)))
		total += n[col]
	}
	buf := make([]byte, total)
	var str [texts]string
	at := 0
	for col := range texts {
		if n[col] > 0 {
			copy(buf[at:], unsafe.Slice((*byte)(cMem(ptr[col])), n[col]))
			str[col] = unsafe.String(&buf[at], n[col])
		}
		at += n[col]
	}
	return distribution.Release{
		ID: str[0], PluginID: str[1], Version: str[2], Description: str[3], ArtifactDigest: str[4],
		Size:        lib.Xsqlite3_column_int64(c.tls, s, 5),
		Yanked:      lib.Xsqlite3_column_int64(c.tls, s, 6) != 0,
		PublishedAt: store.UnixTime(lib.Xsqlite3_column_int64(c.tls, s, 7)),
	}
}

// lookupRelease runs statement i, which selects one release.
func (p *pointPool) lookupRelease(i int, args ...string) (distribution.Release, error) {
	c, err := p.take()
	if err != nil {
		return distribution.Release{}, err
	}
	found, err := c.query(i, args...)
	if err != nil {
		p.put(c)
		return distribution.Release{}, err
	}
	if !found {
		p.release(c, i)
		return distribution.Release{}, store.ErrNotFound
	}
	rel := c.release(i)
	p.hold(c, i)
	return rel, nil
}

// exists runs statement i, a SELECT 1.
func (p *pointPool) exists(i int, args ...string) (bool, error) {
	c, err := p.take()
	if err != nil {
		return false, err
	}
	found, err := c.query(i, args...)
	if err != nil {
		p.put(c)
		return false, err
	}
	if !found {
		p.release(c, i)
		return false, nil
	}
	p.hold(c, i)
	return true, nil
}

// hold keeps c in the read transaction of its statement i, which stands
// on the row it returned (a statement that returned no row has ended its
// transaction already), and ends the transaction held before, which the
// lookup on c has overlapped.
func (p *pointPool) hold(c *pointConn, i int) {
	p.mu.Lock()
	if p.noHold > 0 {
		p.mu.Unlock()
		p.release(c, i)
		return
	}
	old, oldIn := p.held, p.heldIn
	p.held, p.heldIn, p.touched = c, i, true
	if old == nil {
		p.timer.Reset(linger)
	}
	p.mu.Unlock()
	if old != nil {
		p.release(old, oldIn)
	}
}

// release ends c's read transaction and gives c back.
func (p *pointPool) release(c *pointConn, i int) {
	c.done(i)
	p.put(c)
}

// expire ends the held transaction when no lookup ended for linger.
func (p *pointPool) expire() {
	p.mu.Lock()
	if p.touched {
		p.touched = false
		p.timer.Reset(linger)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.stopHolding(0)
}

// stopHolding ends the held transaction, if any, and adds n to noHold.
func (p *pointPool) stopHolding(n int) {
	p.mu.Lock()
	p.noHold += n
	c, i := p.held, p.heldIn
	p.held = nil
	p.mu.Unlock()
	if c != nil {
		p.release(c, i)
	}
}

// beginWrite ends the held transaction and holds none until endWrite:
// the checkpoint that follows a commit copies the WAL into the database
// only as far as the oldest snapshot still read, and a snapshot held from
// before the commit would keep the WAL growing.
func (p *pointPool) beginWrite() { p.stopHolding(1) }

// endWrite ends what beginWrite began.
func (p *pointPool) endWrite() {
	p.mu.Lock()
	p.noHold--
	p.mu.Unlock()
}

// errClosed is the error of a lookup after Close.
var errClosed = errors.New("sqlite: database is closed")

// take waits for a free connection.
func (p *pointPool) take() (*pointConn, error) {
	c, ok := <-p.free
	if !ok {
		return nil, errClosed
	}
	return c, nil
}

func (p *pointPool) put(c *pointConn) { p.free <- c }

// close closes every connection, waiting for those in use; lookups after
// it fail with errClosed.
func (p *pointPool) close() error {
	p.stopHolding(1)
	p.timer.Stop()
	var errs []error
	for range p.n {
		errs = append(errs, (<-p.free).close())
	}
	close(p.free)
	return errors.Join(errs...)
}

// cMem is the C memory at p, which modernc.org/libc allocates outside the
// Go heap: the collector neither moves nor frees it, so holding it as a Go
// pointer is safe (and the conversion is spelt so that vet sees that).
func cMem(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// pointConns is the size of the point pool: lookups finish in
// microseconds without blocking, so more connections than threads that
// run Go code would only wait for a CPU.
func pointConns() int { return 2 * runtime.GOMAXPROCS(0) }
