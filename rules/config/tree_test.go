package config

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// minimal is the smallest valid configuration, for tests that add to it.
func minimal(tb testing.TB) string {
	tb.Helper()
	data, err := os.ReadFile(fixtures + "/minimal.good.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// nested is an unknown key holding a mapping nested depth levels deep,
// in flow style ({a: {a: … 1}}).
func nested(depth int) string {
	return "bogus: " + strings.Repeat("{a: ", depth-1) + "1" + strings.Repeat("}", depth-1) + "\n"
}

// TestDeepNestingIsRefused: an unknown key nested 3000 levels deep took
// over two minutes to load (issue 31, item 10). It is now refused by its
// depth, with its line, before anything walks it.
func TestDeepNestingIsRefused(t *testing.T) {
	base := minimal(t)
	line := strings.Count(base, "\n") + 1
	_, err := Parse([]byte(base+nested(3000)), "deep.yaml")
	want := fmt.Sprintf("deep.yaml:%d: bogus.a.a.", line)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), fmt.Sprintf(": nested deeper than %d levels", MaxDepth)) {
		t.Fatalf("Parse of a 3000-deep key = %v, want %q…nested deeper than %d levels", err, want, MaxDepth)
	}
	// Up to the bound, a deep unknown key is just an unknown key.
	_, err = Parse([]byte(base+nested(MaxDepth-1)), "deep.yaml")
	if err == nil || err.Error() != fmt.Sprintf("deep.yaml:%d: bogus: unknown key", line) {
		t.Fatalf("Parse of a %d-deep key = %v, want the unknown key only", MaxDepth-1, err)
	}
	// Lists count as levels too, and the prober's and the proxy's files
	// (ParseStrict) are held to the same bound.
	var dst struct{}
	err = ParseStrict([]byte("x: "+strings.Repeat("[", 40)+strings.Repeat("]", 40)+"\n"), "p.yaml", &dst, nil)
	if err == nil || !strings.Contains(err.Error(), "p.yaml:1: x[0][0]") || !strings.Contains(err.Error(), "nested deeper than") {
		t.Fatalf("ParseStrict of 40 nested lists = %v", err)
	}
}

// TestKeysRepeatedInAnyCase: viper lower-cased keys and merged twins,
// the last one winning, so that Free: beside free: put its servers in
// nginx's include file (issue 31, item 5). Both lines are reported.
func TestKeysRepeatedInAnyCase(t *testing.T) {
	var dst struct {
		Headers map[string]string `mapstructure:"headers"`
	}
	err := ParseStrict([]byte("headers:\n  X-Org: a\n  x-org: b\n"), "p.yaml", &dst, nil)
	want := `p.yaml:3: headers.x-org: key "x-org" repeats "X-Org" of p.yaml:2 in another case (keys are case-insensitive)`
	if err == nil || err.Error() != want {
		t.Errorf("ParseStrict = %v, want %s", err, want)
	}
	// Same case: yaml's own duplicate, reported the same way.
	err = ParseStrict([]byte("headers: {a: 1, a: 2}\n"), "p.yaml", &dst, nil)
	want = `p.yaml:1: headers.a: key repeated (first at p.yaml:1)`
	if err == nil || err.Error() != want {
		t.Errorf("ParseStrict = %v, want %s", err, want)
	}
	// Within lists too.
	_, err = Parse([]byte(minimal(t)+"alerting:\n  alertmanagers:\n    - url: http://a:9093\n      URL: http://b:9093\n"), "h.yaml")
	if err == nil || !strings.Contains(err.Error(), `: alerting.alertmanagers[0].URL: key "URL" repeats "url" of h.yaml:`) {
		t.Errorf("Parse = %v", err)
	}
}

// TestAnchorsAndMerges: readTree expands aliases and merge keys as yaml
// does: the mapping's own keys win over merged ones, earlier merges over
// later ones.
func TestAnchorsAndMerges(t *testing.T) {
	doc := strings.Replace(minimal(t), "levels:\n", "x-level: &lv {recover_for: 5m, cooldown: 5m, retries: true, dwell: 9m}\nlevels:\n", 1)
	doc = strings.Replace(doc, "  - {name: warm, below: 85, recover_above: 90, dwell: 1m, recover_for: 5m, cooldown: 5m, primary_percent: 95, retries: true}",
		"  - {<<: *lv, name: warm, below: 85, recover_above: 90, dwell: 1m, primary_percent: 95}", 1)
	if !strings.Contains(doc, "*lv") {
		t.Fatal("the fixture changed: no level to rewrite")
	}
	tr, err := readTree([]byte(doc), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	warm := tr.m["levels"].([]any)[0].(map[string]any)
	if warm["dwell"] != "1m" || warm["cooldown"] != "5m" || warm["retries"] != true {
		t.Errorf("merged level = %v", warm)
	}
	// A billion laughs is refused, not expanded.
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	if _, err := readTree([]byte(b.String()), "l.yaml"); err == nil || !strings.Contains(err.Error(), "through aliases") {
		t.Errorf("billion laughs: %v", err)
	}
}

// BenchmarkParseSize loads files of growing size whose bulk is unknown
// keys, wide or nested to MaxDepth-1: its MB/s stays about the same from
// 64 kB to 1 MB, so loading is linear in the file's size. Before, a 1 MB
// file took 7.5 s and the time grew faster than the size.
//
//	go test -run '^$' -bench ParseSize ./rules/config
func BenchmarkParseSize(b *testing.B) {
	base := minimal(b)
	for _, shape := range []struct {
		name string
		leaf func(i int) string // one unknown key, a line
	}{
		{"wide", func(i int) string { return fmt.Sprintf("  k%d: {a: {b: {c: 1}}}\n", i) }},
		{"deep", func(i int) string {
			return fmt.Sprintf("  k%d: %s1%s\n", i, strings.Repeat("{a: ", MaxDepth-3), strings.Repeat("}", MaxDepth-3))
		}},
	} {
		for _, size := range []int{64 << 10, 256 << 10, 1 << 20} {
			var doc strings.Builder
			doc.WriteString(base + "bogus:\n")
			for i := 0; doc.Len() < size; i++ {
				doc.WriteString(shape.leaf(i))
			}
			data := []byte(doc.String())
			b.Run(fmt.Sprintf("%s/%dkB", shape.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if _, err := Parse(data, "big.yaml"); err == nil || !strings.Contains(err.Error(), "bogus: unknown key") {
						b.Fatalf("Parse = %v", err)
					}
				}
			})
		}
	}
}
