package kv

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.env")
	if err := os.WriteFile(p, []byte("# c\na=1\n\nb = two words \nnosep\nc=x=y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Read(p, "=")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "1", "b": "two words", "c": "x=y"}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got %v, want %v", m, want)
	}
	if got := SortedKeys(m); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("SortedKeys: %v", got)
	}
}
