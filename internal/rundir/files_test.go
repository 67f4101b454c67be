package rundir

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A directory whose path holds every glob metacharacter, a space and a
// quote: Files matches names literally, where filepath.Glob finds nothing.
func TestFilesOnAPathThatLooksLikeAPattern(t *testing.T) {
	dir := filepath.Join(t.TempDir(), `My Runs [x]* ?\ 'q' $(id)`)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"pidstat-b.txt", "pidstat-a.txt", "pidstat-.txt", "pidstat.txt", "mpstat.json", "xpidstat-c.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "pidstat-*.txt")); len(m) != 0 {
		t.Fatalf("Glob found %v: this test no longer shows what Files is for", m)
	}
	got, err := Files(dir, "pidstat-", ".txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "pidstat-.txt"), filepath.Join(dir, "pidstat-a.txt"), filepath.Join(dir, "pidstat-b.txt")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Files = %q, want %q", got, want)
	}
	// Prefix and suffix may not share bytes: "ab" is not "ab*b".
	if err := os.WriteFile(filepath.Join(dir, "ab"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := Files(dir, "ab", "b"); len(got) != 0 {
		t.Fatalf("Files(ab, b) = %q, want none", got)
	}
	all, _ := Files(dir, "", "")
	if len(all) != 7 {
		t.Fatalf("Files(dir, \"\", \"\") = %d entries, want 7", len(all))
	}
	if got, err := Files(filepath.Join(dir, "missing"), "", ""); got != nil || err != nil {
		t.Fatalf("a missing directory: %v, %v; want none, nil", got, err)
	}
}
