package install

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/plugkit/plugkit/internal/jsontree"
)

// decodeLock fills a Lock from the strict parse tree of a lock file:
// every value of the right JSON type, no unknown member. One strict parse
// (which refuses duplicate names) and one walk keep reading a lock linear
// and about as fast as parsing it.
func decodeLock(root jsontree.Node) (*Lock, error) {
	l := &Lock{}
	err := members(root, func(name string, v jsontree.Node) error {
		switch name {
		case "lockfileVersion":
			n, err := strconv.Atoi(string(v.Raw()))
			if v.Kind() != jsontree.Number || err != nil || n < 1 {
				return &treeError{msg: fmt.Sprintf("lockfileVersion %s is not a version number", v.Raw())}
			}
			if n > LockVersion {
				return &treeError{msg: fmt.Sprintf("lockfileVersion %d needs a newer plugkit: this one reads versions 1 to %d", n, LockVersion)}
			}
			l.Version = n
		case "policy":
			return str(v, &l.Policy)
		case "plugins":
			l.Plugins = make([]Entry, 0, v.Len())
			return elems(v, func(e jsontree.Node) error {
				var entry Entry
				if err := decodeEntry(e, &entry); err != nil {
					return err
				}
				l.Plugins = append(l.Plugins, entry)
				return nil
			})
		default:
			return errUnknown
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if l.Version == 0 {
		return nil, &treeError{msg: fmt.Sprintf("lockfileVersion is missing; this plugkit reads versions 1 to %d", LockVersion)}
	}
	if l.Plugins == nil {
		return nil, &treeError{msg: "plugins is missing"}
	}
	return l, nil
}

func decodeEntry(n jsontree.Node, e *Entry) error {
	return members(n, func(name string, v jsontree.Node) error {
		switch name {
		case "name":
			return str(v, &e.Name)
		case "version":
			return str(v, &e.Version)
		case "source":
			return decodeSource(v, &e.Source)
		case "identity":
			return str(v, &e.Identity)
		case "archiveDigest":
			return str(v, &e.ArchiveDigest)
		case "installedAt":
			return str(v, &e.InstalledAt)
		case "trust":
			e.Trust = &Trust{}
			return members(v, func(name string, v jsontree.Node) error {
				switch name {
				case "rule":
					return str(v, &e.Trust.Rule)
				case "signer":
					return str(v, &e.Trust.Signer)
				}
				return errUnknown
			})
		case "skills":
			return strs(v, &e.Skills)
		case "servers":
			e.Servers = []Server{}
			return elems(v, func(sv jsontree.Node) error {
				var s Server
				if err := decodeServer(sv, &s); err != nil {
					return err
				}
				e.Servers = append(e.Servers, s)
				return nil
			})
		}
		return errUnknown
	})
}

func decodeSource(n jsontree.Node, s *Source) error {
	return members(n, func(name string, v jsontree.Node) error {
		switch name {
		case "kind":
			return str(v, &s.Kind)
		case "path":
			return str(v, &s.Path)
		case "reference":
			return str(v, &s.Reference)
		case "registry":
			return str(v, &s.Registry)
		case "plugin":
			return str(v, &s.Plugin)
		case "channel":
			return str(v, &s.Channel)
		case "release":
			return str(v, &s.Release)
		case "plainHTTP":
			return boolean(v, &s.PlainHTTP)
		}
		return errUnknown
	})
}

func decodeServer(n jsontree.Node, s *Server) error {
	return members(n, func(name string, v jsontree.Node) error {
		switch name {
		case "name":
			return str(v, &s.Name)
		case "transport":
			return str(v, &s.Transport)
		case "command":
			return str(v, &s.Command)
		case "args":
			return strs(v, &s.Args)
		case "cwd":
			return str(v, &s.Cwd)
		case "env":
			return strMap(v, &s.Env)
		case "url":
			return str(v, &s.URL)
		case "headers":
			return strMap(v, &s.Headers)
		}
		return errUnknown
	})
}

// treeError is a decoding error and where it happened. The path is built
// only when there is an error, segment by segment on the way out.
type treeError struct {
	rev []string // path segments, innermost first
	msg string
}

func (e *treeError) Error() string {
	var b strings.Builder
	for i := len(e.rev) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(jsontree.EscapePointer(e.rev[i]))
	}
	if b.Len() == 0 {
		b.WriteString("the document")
	}
	return b.String() + ": " + e.msg
}

// under adds the segment seg to the path of a treeError.
func under(seg string, err error) error {
	if te, ok := err.(*treeError); ok {
		te.rev = append(te.rev, seg)
	}
	return err
}

var errUnknown = &treeError{msg: "unknown field"}

// members calls f for each member of the object n.
func members(n jsontree.Node, f func(name string, v jsontree.Node) error) error {
	if n.Kind() != jsontree.Object {
		return &treeError{msg: "want an object, found " + n.Kind().String()}
	}
	for m := range n.Members() {
		if err := f(m.Name(), m.Value); err != nil {
			if err == errUnknown {
				err = &treeError{msg: "unknown field"}
			}
			return under(m.Name(), err)
		}
	}
	return nil
}

// elems calls f for each element of the array n.
func elems(n jsontree.Node, f func(v jsontree.Node) error) error {
	if n.Kind() != jsontree.Array {
		return &treeError{msg: "want an array, found " + n.Kind().String()}
	}
	for i, e := range n.Elems() {
		if err := f(e); err != nil {
			return under(strconv.Itoa(i), err)
		}
	}
	return nil
}

func str(n jsontree.Node, out *string) error {
	if n.Kind() != jsontree.String {
		return &treeError{msg: "want a string, found " + n.Kind().String()}
	}
	*out = n.Str()
	return nil
}

func boolean(n jsontree.Node, out *bool) error {
	if n.Kind() != jsontree.Bool {
		return &treeError{msg: "want a boolean, found " + n.Kind().String()}
	}
	*out = n.Bool()
	return nil
}

func strs(n jsontree.Node, out *[]string) error {
	*out = make([]string, 0, n.Len())
	return elems(n, func(v jsontree.Node) error {
		var s string
		if err := str(v, &s); err != nil {
			return err
		}
		*out = append(*out, s)
		return nil
	})
}

func strMap(n jsontree.Node, out *map[string]string) error {
	*out = make(map[string]string, n.Len())
	return members(n, func(name string, v jsontree.Node) error {
		var s string
		if err := str(v, &s); err != nil {
			return err
		}
		(*out)[name] = s
		return nil
	})
}
