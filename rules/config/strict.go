package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// ParseStrict decodes the YAML document data into dst, which holds its
// defaults, with the conventions of the Hermes configuration: unknown keys
// are errors, durations in Prometheus or Go notation ("30s", "1d"),
// numbers refused when they would be truncated, http_config blocks decoded
// as prometheus/common's HTTPClientConfig. It then calls validate
// (when not nil), whose problems are made with Problem. Every problem is
// returned, one per line, as "source:line: path: message", ordered by line,
// as Parse does. Other configuration files of the project (the prober's)
// use it so that `hermes check` reports them alike. Environment variables
// do not override keys of such files.
func ParseStrict(data []byte, source string, dst any, validate func() error) error {
	t, err := readTree(data, source)
	if err != nil {
		return err
	}
	derr := decodeInto(t.settings(nil), dst, true)
	if derr != nil {
		derr = rootless(derr, reflect.TypeOf(dst).Elem().String())
	}
	var verr error
	if validate != nil {
		verr = validate()
	}
	if derr == nil && verr == nil && len(t.repeats) == 0 {
		return nil
	}
	return locate(source, t.root, joinErrs(slices.Concat(t.repeats, problems(derr), besides(derr, verr))))
}

// besides is the problems of verr, found by validating what decoded, that
// are not about a key in derr's problems that did not decode: such a key
// holds its default or zero value, and a problem about it, or naming it
// (global.query_timeout must be below global.evaluation_interval), would
// be about a value the file does not hold. Unknown keys hide nothing.
func besides(derr, verr error) []error {
	var bad []string
	for _, e := range problems(derr) {
		if p, ok := e.(*problem); ok && p.path != "" && !strings.HasSuffix(p.msg, ": unknown key") {
			bad = append(bad, p.path)
		}
	}
	var out []error
	for _, e := range problems(verr) {
		p, ok := e.(*problem)
		if ok && slices.ContainsFunc(bad, func(b string) bool { return about(p, b) }) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// about says whether p is at path, below it, or names it in its message.
func about(p *problem, path string) bool {
	if p.path == path || strings.HasPrefix(p.path, path+".") || strings.HasPrefix(p.path, path+"[") {
		return true
	}
	for rest := p.msg; ; {
		i := strings.Index(rest, path)
		if i < 0 {
			return false
		}
		rest = rest[i+len(path):]
		if rest == "" || !isKeyChar(rest[0]) {
			return true
		}
	}
}

func isKeyChar(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// Problem is a configuration problem at path ("targets[1].e2e.interval"),
// for the validate function given to ParseStrict: its line is looked up
// in the file. The message is shown as "path: message".
func Problem(path, format string, args ...any) error {
	return &problem{path: path, msg: path + ": " + fmt.Sprintf(format, args...)}
}

// rootless turns mapstructure's problems about the top level of a type
// other than Config, named after the type, into problems without a path.
func rootless(err error, typeName string) error {
	var out []error
	for _, e := range problems(err) {
		if p, ok := e.(*problem); ok && (p.path == typeName || strings.HasPrefix(p.path, typeName+".")) {
			path := strings.TrimPrefix(strings.TrimPrefix(p.path, typeName), ".")
			msg := strings.TrimPrefix(strings.TrimPrefix(p.msg, typeName), ".")
			msg = strings.TrimPrefix(msg, ": ")
			e = &problem{path: path, msg: msg}
		}
		out = append(out, e)
	}
	return joinErrs(out)
}

func joinErrs(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return multi(errs)
}

// multi is a joined error that problems can flatten.
type multi []error

func (m multi) Error() string {
	s := make([]string, len(m))
	for i, e := range m {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

func (m multi) Unwrap() []error { return m }
