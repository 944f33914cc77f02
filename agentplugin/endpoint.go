package agentplugin

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// ErrInsecureURL is matched by the error CheckURL returns for plain http
// to a host that is not loopback.
var ErrInsecureURL = errors.New("non-loopback MCP endpoint must use https")

// CheckURL applies the URL rules of spec 7.2.1 to an MCP endpoint as
// written: an absolute http or https URL without user information or a
// fragment (an empty one included), and https unless the host is exactly
// "localhost" or a loopback IP literal. Its messages never quote the URL,
// which may carry a secret in its query.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("url is not a valid URL")
	}
	if strings.Contains(raw, "#") {
		return errors.New("url must not contain a fragment")
	}
	return CheckEndpoint(u)
}

// CheckEndpoint applies the rules of CheckURL to a parsed URL. mcprun calls
// it again on every request and redirect, since a redirect can break any of
// them.
func CheckEndpoint(u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("url must be an absolute http or https URL (scheme %q)", u.Scheme)
	case u.Opaque != "" || u.Host == "":
		return errors.New("url must be an absolute http or https URL with a host")
	case u.User != nil:
		return errors.New("url must not contain user information")
	case u.Fragment != "" || u.RawFragment != "":
		return errors.New("url must not contain a fragment")
	case u.Scheme == "http" && !IsLoopbackHost(u.Hostname()):
		return fmt.Errorf("%w (host %q)", ErrInsecureURL, u.Hostname())
	}
	return nil
}

// IsLoopbackHost reports whether host is exactly "localhost" or an IP
// literal in a loopback range (127.0.0.0/8, ::1).
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkURL is CheckURL as a diagnostic code and message.
func checkURL(raw string) (code, why string) {
	err := CheckURL(raw)
	switch {
	case err == nil:
		return "", ""
	case errors.Is(err, ErrInsecureURL):
		return CodeURLInsecure, err.Error()
	default:
		return CodeURLInvalid, err.Error()
	}
}

// ErrInvalidHeader is matched by the errors of CheckHeader.
var ErrInvalidHeader = errors.New("invalid HTTP header field")

// CheckHeader reports whether name and value form a valid RFC 9110 field:
// the name a token; the value visible characters, obs-text and inner
// spaces or tabs, with no white space at either end and no control
// characters (CR, LF and NUL among them). Its messages never quote the
// value, which may be a secret.
func CheckHeader(name, value string) error {
	if !validHeaderName(name) {
		return fmt.Errorf("%w: header name %q is not a valid HTTP field name", ErrInvalidHeader, name)
	}
	if !validHeaderValue(value) {
		return fmt.Errorf("%w: header %q has a value that is not a valid HTTP field value", ErrInvalidHeader, name)
	}
	return nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTchar(s[i]) {
			return false
		}
	}
	return true
}

func isTchar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' {
			if i == 0 || i == len(s)-1 {
				return false
			}
			continue
		}
		if c < 0x21 || c == 0x7f {
			return false
		}
	}
	return true
}
