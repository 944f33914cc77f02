package host

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/skill"
)

// SkillFile is the file that defines a skill, the first of its files.
const SkillFile = skill.FileName

// SkillInfo is one skill of the host's plugins.
type SkillInfo struct {
	// ID is the canonical ID PLUGIN/SKILL, unique across the host.
	ID          string
	Plugin      string
	Name        string
	Description string
	// Location is the skill's SKILL.md on disk, below its plugin's root.
	Location string
}

// ActiveSkill is a skill a model has chosen to use: its instructions and
// the files it may read next.
type ActiveSkill struct {
	SkillInfo
	// Body is the Markdown of SKILL.md after the frontmatter.
	Body string
	// Files are the skill's files, skill-relative and slash-separated,
	// SKILL.md first and the others sorted: each one can be read with
	// ReadResource.
	Files []string
}

// Skills lists every skill of every plugin, sorted by plugin name and
// then by skill name.
func (h *Host) Skills() []SkillInfo {
	var out []SkillInfo
	h.eachSkill(func(p *plugin, s *agentplugin.Skill) {
		out = append(out, skillInfo(p, s))
	})
	return out
}

// Prompt renders the <available_skills> block (skill.Render) of every
// skill, each named by its canonical ID and located at its SKILL.md.
func (h *Host) Prompt() string {
	var entries []skill.Entry
	h.eachSkill(func(p *plugin, s *agentplugin.Skill) {
		e := skill.NewEntry(s.Skill, skillInfo(p, s).Location)
		e.Name = s.ID
		entries = append(entries, e)
	})
	return skill.Render(entries)
}

// Skill activates the skill with the canonical ID id.
func (h *Host) Skill(id string) (*ActiveSkill, error) {
	p, s, err := h.skill(id)
	if err != nil {
		return nil, err
	}
	files := []string{SkillFile}
	files = append(files, slices.Sorted(maps.Keys(s.Files))...)
	return &ActiveSkill{SkillInfo: skillInfo(p, s), Body: s.Body, Files: files}, nil
}

// ReadResource returns the file at the skill-relative path file of the
// skill id ("SKILL.md" or one of ActiveSkill.Files). It reads only inside
// that skill's directory, from the plugin as it was loaded: links were
// resolved then the way package snapshot does (never out of the plugin
// root), and special files were left out. A path with "..", a leading
// "/", a backslash or an empty segment is refused with ErrEscape.
func (h *Host) ReadResource(id, file string) ([]byte, error) {
	_, s, err := h.skill(id)
	if err != nil {
		return nil, err
	}
	if file == "" || file != path.Clean(file) || path.IsAbs(file) || file == ".." || strings.HasPrefix(file, "../") ||
		strings.ContainsAny(file, "\\\x00") {
		return nil, fmt.Errorf("%w: %q", ErrEscape, file)
	}
	if file == SkillFile {
		return s.Raw, nil
	}
	b, ok := s.Files[file]
	if !ok {
		return nil, fmt.Errorf("%w: skill %s has no file %q", ErrNotFound, id, file)
	}
	return b, nil
}

// skill finds a skill by canonical ID.
func (h *Host) skill(id string) (*plugin, *agentplugin.Skill, error) {
	name, _, _ := strings.Cut(id, "/")
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return nil, nil, ErrClosed
	}
	if p := h.plugins[name]; p != nil {
		for i := range p.Package.Skills {
			if s := &p.Package.Skills[i]; s.ID == id {
				return p, s, nil
			}
		}
	}
	return nil, nil, fmt.Errorf("%w: no skill %q", ErrNotFound, id)
}

// eachSkill calls f for every skill, by plugin name and then skill name.
func (h *Host) eachSkill(f func(*plugin, *agentplugin.Skill)) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, name := range slices.Sorted(maps.Keys(h.plugins)) {
		p := h.plugins[name]
		for i := range p.Package.Skills {
			f(p, &p.Package.Skills[i])
		}
	}
}

func skillInfo(p *plugin, s *agentplugin.Skill) SkillInfo {
	return SkillInfo{ID: s.ID, Plugin: p.Package.Name, Name: s.Name, Description: s.Description,
		Location: filepath.Join(p.Root, filepath.FromSlash(s.Path))}
}
