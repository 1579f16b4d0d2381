package mapjudge

import (
	"fmt"
	"strconv"
	"strings"
)

// jsonPath is a parsed field path: object keys (string) and array indexes
// (int). A tiny subset of JSONPath is enough for required fields, and a
// library for it would bring a query language nobody here needs.
type jsonPath []any

// parsePath parses "choices[0].message.content", "$.choices[0].message"
// and "choices.0.message".
func parsePath(s string) (jsonPath, error) {
	orig := s
	s = strings.TrimPrefix(strings.TrimPrefix(s, "$"), ".")
	if s == "" {
		return nil, fmt.Errorf("empty path %q", orig)
	}
	var p jsonPath
	for part := range strings.SplitSeq(s, ".") {
		name, rest, hasIndex := strings.Cut(part, "[")
		if name == "" && !hasIndex {
			return nil, fmt.Errorf("path %q: empty segment", orig)
		}
		if name != "" {
			if i, err := strconv.Atoi(name); err == nil && i >= 0 {
				p = append(p, i)
			} else {
				p = append(p, name)
			}
		}
		for hasIndex {
			idx, after, ok := strings.Cut(rest, "]")
			i, err := strconv.Atoi(idx)
			if !ok || err != nil || i < 0 {
				return nil, fmt.Errorf("path %q: bad index [%s", orig, rest)
			}
			p = append(p, i)
			if after == "" {
				break
			}
			if !strings.HasPrefix(after, "[") {
				return nil, fmt.Errorf("path %q: unexpected %q", orig, after)
			}
			rest = after[1:]
		}
	}
	return p, nil
}

func (p jsonPath) String() string {
	var b strings.Builder
	for _, seg := range p {
		switch s := seg.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// lookup returns the value at p in a decoded JSON document, and whether it
// is there and not null.
func (p jsonPath) lookup(doc any) (any, bool) {
	cur := doc
	for _, seg := range p {
		switch s := seg.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			cur, ok = m[s]
			if !ok {
				return nil, false
			}
		case int:
			a, ok := cur.([]any)
			if !ok || s >= len(a) {
				return nil, false
			}
			cur = a[s]
		}
	}
	return cur, cur != nil
}

// get is lookup for a path known at compile time.
func get(doc any, segs ...any) (any, bool) { return jsonPath(segs).lookup(doc) }

func getString(doc any, segs ...any) (string, bool) {
	v, ok := get(doc, segs...)
	s, isStr := v.(string)
	return s, ok && isStr
}
