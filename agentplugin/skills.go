package agentplugin

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/plugkit/plugkit/skill"
	"github.com/plugkit/plugkit/snapshot"
)

const (
	skillsDir = "skills"
	skillFile = "SKILL.md"
)

// skills discovers the skills of spec 7.1: immediate children of skills/
// whose SKILL.md (exact name) is a regular file. Nothing deeper is searched.
func (l *loader) skills() {
	switch k, why := l.kind(skillsDir); {
	case why == snapshot.ReasonSpecial || k == snapshot.File:
		l.report(Diagnostic{Severity: Error, Code: CodeSkillsNotDir, Path: skillsDir,
			Message: "skills is not a directory; skills are disabled for this plugin"})
		return
	case why == snapshot.ReasonBroken:
		l.report(Diagnostic{Severity: Error, Code: CodeSkillsNotDir, Path: skillsDir,
			Message: "skills is a broken link; skills are disabled for this plugin"})
		return
	case why != "":
		l.report(Diagnostic{Severity: Error, Code: CodeSkillsEscapes, Path: skillsDir,
			Message: "skills does not resolve within the plugin root (" + string(why) + "); skills are disabled for this plugin"})
		return
	case k == snapshot.Absent:
		return
	}
	steps, jobs := l.discoverSkills()
	parseSkills(jobs, skill.Options{Strict: l.opts.StrictSkills, Limits: l.limits.Skill})
	// Sized once for the skills that parsed, which is at most the skills
	// added (a duplicate is skipped); none leaves Skills nil.
	valid := 0
	for i := range jobs {
		if jobs[i].skill != nil {
			valid++
		}
	}
	seen := make(map[string]string, valid)
	if valid > 0 {
		l.pkg.Skills = slices.Grow(l.pkg.Skills, valid)
	}
	for _, st := range steps {
		if st.job == nil {
			l.report(*st.diag)
		} else {
			l.addSkill(st.job, seen)
		}
	}
}

// skillStep is one finding of skill discovery, in order: a diagnostic, or
// a SKILL.md to parse. Both are pointers, as most steps are jobs and a
// diagnostic is ten times the size of a pointer.
type skillStep struct {
	diag *Diagnostic
	job  *skillJob
}

// skillJob is one SKILL.md and, once parsed, what skill.Parse made of it.
type skillJob struct {
	name, dir, doc string
	content        []byte
	files          map[string][]byte
	skill          *skill.Skill
	problems       []skill.Problem
}

// discoverSkills walks the children of skills/ in order and returns what
// each is: a skill to parse, or why it is not one; jobs are the skills to
// parse, in the same order.
func (l *loader) discoverSkills() (steps []skillStep, jobs []skillJob) {
	files := l.skillFiles()
	names := l.skillCandidates()
	// Sized once, as there is at most one step and one job for each name:
	// grown step by step, they were a tenth of the memory of validating
	// 5,000 skills. Jobs never move, so steps can point at them.
	steps = make([]skillStep, 0, len(names))
	jobs = make([]skillJob, 0, len(names))
	count := 0
	for _, name := range names {
		dir := skillsDir + "/" + name
		if k, why := l.kind(dir); why != "" {
			d := omittedSkillDir(dir, why)
			steps = append(steps, skillStep{diag: &d})
			continue
		} else if k == snapshot.File {
			continue // a file directly under skills/ is not a skill
		}
		doc := dir + "/" + skillFile
		switch k, why := l.kind(doc); {
		case why == snapshot.ReasonEscape || why == snapshot.ReasonCycle:
			steps = append(steps, skillStep{diag: &Diagnostic{Severity: Error, Code: CodeSkillEscapes, Path: doc,
				Message: fmt.Sprintf("%s does not resolve within the plugin root (%s); skill %q is skipped", doc, why, name)}})
			continue
		case why != "" || k == snapshot.Dir:
			steps = append(steps, skillStep{diag: &Diagnostic{Severity: Warning, Code: CodeSkillMDNotFile, Path: doc,
				Message: fmt.Sprintf("%s is not a regular file, so %s is not a skill", doc, dir)}})
			continue
		case k == snapshot.Absent:
			steps = append(steps, skillStep{diag: &Diagnostic{Severity: Warning, Code: CodeSkillMDMissing, Path: dir,
				Message: fmt.Sprintf("%s has no %s (exact name), so it is not a skill", dir, skillFile)}})
			continue
		}
		if count++; count > l.limits.MaxSkills {
			steps = append(steps, skillStep{diag: &Diagnostic{Severity: Error, Code: CodeSkillsLimit, Path: skillsDir,
				Message: fmt.Sprintf("more than %d skills (limit MaxSkills); the rest are skipped", l.limits.MaxSkills)}})
			break
		}
		jobs = append(jobs, skillJob{name: name, dir: dir, doc: doc, content: l.files[doc], files: files[dir]})
		steps = append(steps, skillStep{job: &jobs[len(jobs)-1]})
	}
	return steps, jobs
}

// parallelSkills is the number of skills from which parsing them is spread
// over the CPUs: below it, starting goroutines costs more than it saves.
const parallelSkills = 32

// parseSkills parses the SKILL.md of every job, on all CPUs when there are
// many. skill.Parse is a pure function, so the results, replayed in
// discovery order, are those of a serial parse.
func parseSkills(jobs []skillJob, opts skill.Options) {
	parse := func(j *skillJob) { j.skill, j.problems = skill.Parse(j.content, j.name, opts) }
	workers := min(runtime.GOMAXPROCS(0), len(jobs)/parallelSkills)
	if workers < 2 {
		for i := range jobs {
			parse(&jobs[i])
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(jobs)); i = next.Add(1) - 1 {
				parse(&jobs[i])
			}
		})
	}
	wg.Wait()
}

// skillCandidates lists the names of the entries directly under skills/,
// including those the directory reader omitted (a link that escapes, say),
// sorted.
func (l *loader) skillCandidates() []string {
	names := l.index.Children(skillsDir)
	for _, o := range l.omits {
		rest, ok := strings.CutPrefix(o.Path, skillsDir+"/")
		if !ok {
			continue
		}
		name, sub, nested := strings.Cut(rest, "/")
		if !nested || sub == skillFile {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// omittedSkillDir is the diagnostic for a child of skills/ the directory
// reader did not read: when it was a directory, its SKILL.md cannot
// resolve within the root, so that skill is skipped (spec 4.1, boundary
// 3).
func omittedSkillDir(dir string, why snapshot.Reason) Diagnostic {
	switch why {
	case snapshot.ReasonEscape, snapshot.ReasonCycle:
		return Diagnostic{Severity: Error, Code: CodeSkillEscapes, Path: dir,
			Message: fmt.Sprintf("%s does not resolve within the plugin root (%s); it is not loaded as a skill", dir, why)}
	}
	return Diagnostic{Severity: Warning, Code: CodeSkillMDNotFile, Path: dir,
		Message: fmt.Sprintf("%s is not a directory (%s), so it is not a skill", dir, why)}
}

// addSkill reports what parsing one SKILL.md found and adds the skill when
// it is valid.
func (l *loader) addSkill(j *skillJob, seen map[string]string) {
	s, doc, dir := j.skill, j.doc, j.dir
	for _, p := range j.problems {
		sev := Warning
		if p.Severity == skill.Error {
			sev = Error
		}
		l.report(Diagnostic{Severity: sev, Code: p.Code, Path: doc, Pointer: p.Key,
			Line: p.Line, Column: p.Column, Message: p.Message})
	}
	if s == nil {
		return
	}
	if other, dup := seen[s.Name]; dup {
		l.report(Diagnostic{Severity: Error, Code: CodeSkillDuplicateID, Path: doc, Pointer: "/name",
			Message: fmt.Sprintf("skill name %q is already used by %s; this skill is skipped", s.Name, other)})
		return
	}
	seen[s.Name] = dir
	s.Files = j.files
	l.pkg.Skills = append(l.pkg.Skills, Skill{
		ID:    l.pkg.Name + "/" + s.Name,
		Path:  doc,
		Dir:   dir,
		Skill: s,
	})
}

// skillFiles buckets every file below skills/*/ by its skill directory,
// keyed by skill-relative path, SKILL.md excluded, in one pass over the
// snapshot.
func (l *loader) skillFiles() map[string]map[string][]byte {
	out := map[string]map[string][]byte{}
	for p, b := range l.files {
		rest, ok := strings.CutPrefix(p, skillsDir+"/")
		if !ok {
			continue
		}
		name, sub, nested := strings.Cut(rest, "/")
		if !nested || sub == skillFile {
			continue
		}
		dir := skillsDir + "/" + name
		if out[dir] == nil {
			out[dir] = map[string][]byte{}
		}
		out[dir][sub] = b
	}
	return out
}

// SkillEntries returns the plugin's skills as entries of the
// <available_skills> prompt block (see skill.Render), each located at its
// SKILL.md below root, the directory the plugin is installed in.
func (p *Package) SkillEntries(root string) []skill.Entry {
	entries := make([]skill.Entry, len(p.Skills))
	for i, s := range p.Skills {
		entries[i] = skill.NewEntry(s.Skill, filepath.Join(root, filepath.FromSlash(s.Path)))
	}
	return entries
}
