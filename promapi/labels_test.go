package promapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	jsoniter "github.com/json-iterator/go"

	"github.com/hermes-failover/hermes/rules"
)

// TestReadLabelAsEncodingJSON: readLabel, reading label after label into
// one buffer, gives each value as encoding/json decodes it, through
// json-iterator buffers small enough that a value spans several reads.
func TestReadLabelAsEncodingJSON(t *testing.T) {
	values := []string{
		`"a"`, `""`, `"provider-12/model-3"`, `"` + strings.Repeat("x", 200) + `"`, `"b"`,
		`"a\"b\u0026c\\d"`, `"\ud800"`, `"\ud83d\ude00"`, "\"\xff\xfe\"", `"é"`, `"short"`,
	}
	for _, size := range []int{4, 64, readBufferSize} {
		it := jsoniter.Parse(jsoniter.ConfigDefault, strings.NewReader("["+strings.Join(values, ",")+"]"), size)
		var buf []byte
		i := 0
		it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
			buf = readLabel(it, buf)
			var want string
			if err := json.Unmarshal([]byte(values[i]), &want); err != nil {
				t.Fatal(err)
			}
			if string(buf) != want {
				t.Errorf("buffer %d, %s: read %q, encoding/json %q", size, values[i], buf, want)
			}
			i++
			return true
		})
		if it.Error != nil || i != len(values) {
			t.Fatalf("buffer %d: %d values read, error %v", size, i, it.Error)
		}
	}
}

// TestAddBytesAsAdd: an Answer fed label bytes (addBytes, the decoder's
// path) holds what one fed strings (Add) holds.
func TestAddBytesAsAdd(t *testing.T) {
	index := map[string]int{"a": 0, "b": 1}
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
		want, got := newAnswer(index, 2, counted, windows), newAnswer(index, 2, counted, windows)
		for _, s := range series {
			want.Add(s.route, s.part, s.v)
			got.addBytes([]byte(s.route), []byte(s.part), s.v)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("counted %v: addBytes %+v, Add %+v", counted, got, want)
		}
	}
}
