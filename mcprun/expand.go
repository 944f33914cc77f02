package mcprun

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// The two placeholders of spec section 9.2 and the variables of 9.1.
const (
	rootPlaceholder = "${PLUGIN_ROOT}"
	dataPlaceholder = "${PLUGIN_DATA}"
	rootVar         = "PLUGIN_ROOT"
	dataVar         = "PLUGIN_DATA"
)

// expander replaces the two placeholders in one non-recursive pass.
// strings.Replacer scans the input once and never rescans replaced text,
// which is exactly section 9.2's rule: a root path that itself contains
// "${PLUGIN_DATA}" is inserted literally.
type expander struct{ r *strings.Replacer }

func newExpander(root, data string) expander {
	return expander{strings.NewReplacer(rootPlaceholder, root, dataPlaceholder, data)}
}

func (e expander) expand(s string) string { return e.r.Replace(s) }

// resolveCwd applies section 7.2.1's cwd rules: the root when omitted;
// otherwise one of three forms, expanded first, then resolved with links
// and contained in the root ("./", ${PLUGIN_ROOT}) or in the data
// directory (${PLUGIN_DATA}). root and data are already resolved.
func resolveCwd(cwd, root, data string, e expander) (string, error) {
	var base, abs string
	switch {
	case cwd == "":
		return root, nil
	case strings.HasPrefix(cwd, "./"):
		base = root
		// Join without cleaning, so ".." is applied after links on disk.
		abs = root + string(filepath.Separator) + filepath.FromSlash(e.expand(cwd[2:]))
	case cwd == rootPlaceholder || strings.HasPrefix(cwd, rootPlaceholder+"/"):
		base, abs = root, filepath.FromSlash(e.expand(cwd))
	case cwd == dataPlaceholder || strings.HasPrefix(cwd, dataPlaceholder+"/"):
		base, abs = data, filepath.FromSlash(e.expand(cwd))
	default:
		return "", fmt.Errorf("cwd %q: %w", cwd, ErrInvalidCwd)
	}
	if strings.ContainsRune(abs, 0) {
		return "", fmt.Errorf("cwd %q: %w", cwd, ErrInvalidCwd)
	}
	return resolveWithin("cwd", abs, base)
}

// buildEnv overlays the expanded configured env on base, then the host's
// values, then sets PLUGIN_ROOT and PLUGIN_DATA last (section 9.1). Later
// entries replace earlier ones of the same name; on Unix names are
// case-sensitive. The result has one entry per name, in base order, new
// names appended in sorted order so that plans are deterministic.
func buildEnv(base []string, configured, host map[string]string, root, data string, e expander) ([]string, error) {
	for _, k := range slices.Sorted(maps.Keys(configured)) {
		if err := checkEnvName(k); err != nil {
			return nil, err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(host)) {
		if checkEnvName(k) != nil {
			// Not the plugin's fault, so not ErrInvalidEnv: the host's
			// configuration is wrong.
			return nil, fmt.Errorf("%w: env name %q cannot be set", ErrHostConfig, k)
		}
	}
	out := make([]string, 0, len(base)+len(configured)+2)
	index := make(map[string]int, cap(out))
	set := func(k, v string) {
		kv := k + "=" + v
		if i, ok := index[envKey(k)]; ok {
			out[i] = kv
			return
		}
		index[envKey(k)] = len(out)
		out = append(out, kv)
	}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue // not a variable; exec would pass it through unusable
		}
		set(k, v)
	}
	for _, k := range slices.Sorted(maps.Keys(configured)) {
		set(k, e.expand(configured[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(host)) {
		set(k, host[k])
	}
	set(rootVar, root)
	set(dataVar, data)
	return out, nil
}

// checkEnvName refuses names no environment can hold and the two names
// section 9.2 reserves for the client.
func checkEnvName(k string) error {
	if k == "" || strings.ContainsAny(k, "=\x00") {
		return fmt.Errorf("env name %q: %w", k, ErrInvalidEnv)
	}
	if envKey(k) == envKey(rootVar) || envKey(k) == envKey(dataVar) {
		return fmt.Errorf("env name %q is reserved for the client: %w", k, ErrInvalidEnv)
	}
	return nil
}
