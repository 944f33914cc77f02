package testservice

import (
	"os"
	"strconv"
	"strings"
)

// Alive reports whether pid is a live process, from /proc: a zombie (dead,
// not reaped yet, as under a PID 1 that never reaps) counts as dead. Where
// /proc does not exist, every process looks dead, so tests that use it are
// Linux tests.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
