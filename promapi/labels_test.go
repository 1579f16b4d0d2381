package promapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules"
)

// TestReadLabelAsEncodingJSON: readLabel, reading label after label into
// one buffer, gives each value as encoding/json decodes it, through
// scanner buffers small enough that a value spans several reads.
func TestReadLabelAsEncodingJSON(t *testing.T) {
	values := []string{
		`"a"`, `""`, `"provider-12/model-3"`, `"` + strings.Repeat("x", 200) + `"`, `"b"`,
		`"a\"b\u0026c\\d"`, `"\ud800"`, `"\ud83d\ude00"`, "\"\xff\xfe\"", `"é"`, `"short"`, `null`, `"x\\"`,
	}
	for _, size := range []int{1, 2, 4, 64, readBufferSize} {
		s := newScanner(strings.NewReader("[ "+strings.Join(values, " ,\n")+" ]"), size)
		var buf []byte
		i := 0
		if s.openArray() {
			for first := true; s.element(first); first = false {
				buf = readLabel(s, buf)
				var want string
				if err := json.Unmarshal([]byte(values[i]), &want); err != nil {
					t.Fatal(err)
				}
				if string(buf) != want {
					t.Errorf("buffer %d, %s: read %q, encoding/json %q", size, values[i], buf, want)
				}
				i++
			}
		}
		if s.err != nil || i != len(values) || s.more() {
			t.Fatalf("buffer %d: %d values read, error %v", size, i, s.err)
		}
	}
}

// TestAddBytesAsAdd: an Answer fed label bytes (addBytes, the decoder's
// path) holds what one fed strings (Add) holds.
func TestAddBytesAsAdd(t *testing.T) {
	routes := newRoutePositions([]string{"a", "b"})
	windows := []time.Duration{15 * time.Minute}
	series := []struct {
		route, part string
		v           float64
	}{
		{"a", "", 1}, {"b", rules.PartValue, 2}, {"a", rules.PartEvidence, 3}, {"x", "", 4},
		{"b", rules.WindowPart(rules.PartValue, windows[0]), 5}, {"b", rules.WindowPart(rules.PartEvidence, windows[0]), 6},
		{"a", rules.WindowPart(rules.PartValue, time.Hour), 7}, {"a", "other", 8}, {"b", rules.PartValue, 9},
	}
	for _, counted := range []bool{false, true} {
		want, got := newAnswer(routes, counted, windows), newAnswer(routes, counted, windows)
		for _, s := range series {
			want.Add(s.route, s.part, s.v)
			got.addBytes([]byte(s.route), []byte(s.part), s.v)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("counted %v: addBytes %+v, Add %+v", counted, got, want)
		}
	}
}
