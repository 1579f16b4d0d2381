package config

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	yaml "go.yaml.in/yaml/v3"
)

// MaxDepth bounds how deeply a configuration file may nest mappings and
// lists. Hermes's deepest key (actuators[0].http_config.tls_config.ca_file)
// is at depth 5 and the prober's and the proxy's are no deeper. yaml's own
// bound is 10,000, but viper, which read the file before tree.go did,
// looked every leaf up by its full path, at a cost that grew with the cube
// of its depth: an unknown key nested 3000 levels deep took over two
// minutes to load. tree.go reads each node once; with the bound, a leaf costs
// at most a fixed amount and loading stays linear in the file's size
// (BenchmarkParseSize).
const MaxDepth = 32

// maxExpandedValues bounds the values a document may expand to through
// aliases (*anchor), so that a small file cannot expand to an exponential
// one ("billion laughs"). yaml's decoder has its own such bound; this
// replaces it because readTree, not yaml's decoder, expands aliases.
const maxExpandedValues = 1_000_000

// tree is a configuration document read once: its node tree (for lines)
// and the map decoded from it, keys lower-cased as viper lower-cased them.
type tree struct {
	root *yaml.Node
	m    map[string]any
	// repeats are the keys repeated in any case, each a *lineProblem; the
	// first of each was read. They do not stop decoding and validation.
	repeats []error
}

// readTree parses data and converts it to the map viper used to read. It finds,
// each with the file:line of both keys, a key repeated in any case in one
// mapping ("Free:" beside "free:"), which viper merged silently (keys are
// case-insensitive), and keeps them in the tree's repeats; it refuses a
// document nested deeper than MaxDepth, or that aliases expand past
// maxExpandedValues.
//
// The conversion is done here rather than by yaml's decoder because that
// decoder compares every key of a mapping with every other one (quadratic
// in a mapping's width: a 400 kB mapping took 2 s) and does so only for
// keys of the same case; a set of lower-cased keys does both in linear
// time.
func readTree(data []byte, source string) (*tree, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(source, err)
	}
	c := converter{source: source}
	t := &tree{root: &root, m: map[string]any{}}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind == 0 || doc.Kind == yaml.DocumentNode {
		return t, nil // an empty file
	}
	if doc.ShortTag() == "!!null" {
		return t, nil
	}
	v := c.value(doc, 1)
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s:%d: the document must be a mapping of keys, got %s", source, doc.Line, kindName(doc))
	}
	t.m, t.repeats = m, c.repeats
	return t, nil
}

// lineProblem is a problem found at a line of the file (a repeated key,
// whose path would lead to the first one); msg starts with its path.
type lineProblem struct {
	line int
	msg  string
}

func (p *lineProblem) Error() string { return p.msg }

// converter turns yaml nodes into the values viper reads.
type converter struct {
	source   string
	path     []string // keys and indices from the document to the node converted
	expanded int      // values made, aliases expanded
	errs     []error
	repeats  []error // keys repeated in any case (*lineProblem)
	stop     bool    // a bound was hit: the rest is not read
}

const maxReported = 100

func (c *converter) fail(err error) {
	if len(c.errs) < maxReported {
		c.errs = append(c.errs, err)
	}
}

func (c *converter) where() string {
	var b strings.Builder
	for _, seg := range c.path {
		if strings.HasPrefix(seg, "[") || b.Len() == 0 {
			b.WriteString(seg)
		} else {
			b.WriteString("." + seg)
		}
	}
	return b.String()
}

// value converts n at depth (the document's mapping is at depth 1).
func (c *converter) value(n *yaml.Node, depth int) any {
	if c.stop {
		return nil
	}
	c.expanded++
	if c.expanded > maxExpandedValues {
		c.fail(fmt.Errorf("%s:%d: the document expands to more than %d values through aliases", c.source, n.Line, maxExpandedValues))
		c.stop = true
		return nil
	}
	switch n.Kind {
	case yaml.AliasNode:
		return c.value(n.Alias, depth)
	case yaml.ScalarNode:
		switch n.ShortTag() { // the common cases without a decoder each
		case "!!str":
			return n.Value
		case "!!null":
			return nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			c.fail(yamlError(c.source, err))
		}
		return v
	}
	if depth > MaxDepth {
		c.fail(fmt.Errorf("%s:%d: %s: nested deeper than %d levels", c.source, n.Line, c.where(), MaxDepth))
		c.stop = true
		return nil
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, item := range n.Content {
			c.path = append(c.path, "["+strconv.Itoa(i)+"]")
			out[i] = c.value(item, depth+1)
			c.path = c.path[:len(c.path)-1]
		}
		return out
	case yaml.MappingNode:
		return c.mapping(n, depth)
	}
	return nil
}

// mapping converts a mapping, reporting keys repeated in any case and
// applying merge keys (<<: *base) as yaml does: the mapping's own keys
// win, then the merged mappings in their order.
func (c *converter) mapping(n *yaml.Node, depth int) map[string]any {
	out := make(map[string]any, len(n.Content)/2)
	keyNodes := make(map[string]*yaml.Node, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		name, ok := keyName(k)
		if !ok {
			c.fail(fmt.Errorf("%s:%d: %s: a key must be a scalar, got %s", c.source, k.Line, c.where(), kindName(k)))
			continue
		}
		lower := strings.ToLower(name)
		if first, dup := keyNodes[lower]; dup {
			firstName, _ := keyName(first)
			shown := joinPath(c.where(), name)
			// Not fatal: the first one is read, and the rest of the file
			// is decoded and validated, so that every problem is reported.
			if firstName == name {
				c.repeats = append(c.repeats, &lineProblem{line: k.Line, msg: fmt.Sprintf("%s: key repeated (first at %s:%d)", shown, c.source, first.Line)})
			} else {
				c.repeats = append(c.repeats, &lineProblem{line: k.Line, msg: fmt.Sprintf("%s: key %q repeats %q of %s:%d in another case (keys are case-insensitive)",
					shown, name, firstName, c.source, first.Line)})
			}
			continue
		}
		keyNodes[lower] = k
		c.path = append(c.path, name)
		out[lower] = c.value(v, depth+1)
		c.path = c.path[:len(c.path)-1]
	}
	for _, m := range merges {
		c.merge(out, m, depth)
	}
	return out
}

// merge adds the keys of a merge key's value (a mapping, an alias of one,
// or a list of them) that out lacks.
func (c *converter) merge(out map[string]any, m *yaml.Node, depth int) {
	for m.Kind == yaml.AliasNode {
		m = m.Alias
	}
	var from []*yaml.Node
	switch m.Kind {
	case yaml.MappingNode:
		from = []*yaml.Node{m}
	case yaml.SequenceNode:
		from = m.Content
	default:
		c.fail(fmt.Errorf("%s:%d: %s: a merge key (<<) takes a mapping or a list of mappings", c.source, m.Line, c.where()))
		return
	}
	for _, f := range from {
		v := c.value(f, depth)
		mm, ok := v.(map[string]any)
		if !ok {
			if !c.stop {
				c.fail(fmt.Errorf("%s:%d: %s: a merge key (<<) takes a mapping or a list of mappings", c.source, f.Line, c.where()))
			}
			continue
		}
		for k, v := range mm {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
}

// keyName is the text of a scalar key (an alias to one included).
func keyName(k *yaml.Node) (string, bool) {
	for k.Kind == yaml.AliasNode {
		k = k.Alias
	}
	return k.Value, k.Kind == yaml.ScalarNode
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return fmt.Sprintf("%q", n.Value)
}

// settings is what the file and the environment set, as mapstructure
// decodes it: t's map with every key outside lists whose variable
// (EnvVar) is set to a non-empty value replaced by that value, and the
// keys of envKeys that the file leaves out added the same way. Null values
// and empty mappings outside lists count as left out, and a key below one
// whose variable is set is dropped: viper's rules, which Hermes followed
// when viper read the file.
//
// Hermes used viper for this and no longer does: viper looks every key up
// by its full path again, at a cost that grows with the cube of the key's
// depth (an unknown key nested 3000 levels deep took over two minutes)
// and with a large constant per key (a 1 MB file took 7.5 s). This walk
// visits each value once.
func (t *tree) settings(envKeys []string) map[string]any {
	out := overlay(t.m, "", envKeys != nil)
	for _, key := range envKeys {
		name := EnvVar(key)
		val, ok := os.LookupEnv(name)
		if !ok || val == "" || shadowed(key) {
			continue
		}
		m := out
		segs := strings.Split(key, ".")
		for _, seg := range segs[:len(segs)-1] {
			next, ok := m[seg].(map[string]any)
			if !ok {
				if _, taken := m[seg]; taken {
					break
				}
				next = map[string]any{}
				m[seg] = next
			}
			m = next
		}
		m[segs[len(segs)-1]] = val
	}
	return out
}

// overlay copies m (at path prefix) with the environment's values over it
// when env is set; see settings.
func overlay(m map[string]any, prefix string, env bool) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		key := joinPath(prefix, k)
		val, set := "", false
		if env {
			val, set = os.LookupEnv(EnvVar(key))
			set = set && val != ""
		}
		if sub, ok := v.(map[string]any); ok {
			// A variable set for a mapping hides every key below it.
			if set {
				continue
			}
			if o := overlay(sub, key, env); len(o) > 0 {
				out[k] = o
			}
			continue
		}
		switch {
		case set:
			out[k] = val
		case v != nil:
			out[k] = v
		}
	}
	return out
}

// shadowed says whether a key above key has its variable set, which hides
// key from viper.
func shadowed(key string) bool {
	for i := range len(key) {
		if key[i] == '.' {
			if val, ok := os.LookupEnv(EnvVar(key[:i])); ok && val != "" {
				return true
			}
		}
	}
	return false
}

// decodeInto decodes settings into dst as viper did (weakly typed input,
// Hermes's hooks); with exact, keys dst has no field for are errors.
func decodeInto(settings map[string]any, dst any, exact bool) error {
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:           dst,
		WeaklyTypedInput: true,
		ErrorUnused:      exact,
		DecodeHook:       mapstructure.ComposeDecodeHookFunc(durationHook, numberHook, httpClientConfigHook),
	})
	if err != nil {
		return err
	}
	return d.Decode(settings)
}

// HasTopKey says whether the YAML document data is a mapping with key at
// its top level, in any case. It reads the node tree only, in linear time:
// the prober's and the proxy's configurations are told apart by it.
func HasTopKey(data []byte, key string) bool {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil || len(root.Content) == 0 {
		return false
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if name, ok := keyName(doc.Content[i]); ok && strings.EqualFold(name, key) {
			return true
		}
	}
	return false
}
