package parse

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixture returns the bytes of testdata/name.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// open returns a reader over testdata/name.
func open(t *testing.T, name string) *bytes.Reader {
	t.Helper()
	return bytes.NewReader(fixture(t, name))
}

// approx reports whether got is within tol of want.
func approx(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func wantFloat(t *testing.T, name string, got *float64, want, tol float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = nil, want %v", name, want)
		return
	}
	if !approx(*got, want, tol) {
		t.Errorf("%s = %v, want %v (±%v)", name, *got, want, tol)
	}
}

func wantNil[T any](t *testing.T, name string, got *T) {
	t.Helper()
	if got != nil {
		t.Errorf("%s = %v, want nil (not measured)", name, *got)
	}
}

func wantErrContains(t *testing.T, err error, sub string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want an error containing %q", sub)
	}
	if !strings.Contains(err.Error(), sub) {
		t.Fatalf("err = %q, want it to contain %q", err, sub)
	}
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestWindowContainsIsClosed(t *testing.T) {
	w := Window{From: utc("2026-11-30T07:00:00Z"), To: utc("2026-11-30T07:00:10Z")}
	for _, c := range []struct {
		at   string
		want bool
	}{
		{"2026-11-30T06:59:59Z", false},
		{"2026-11-30T07:00:00Z", true},
		{"2026-11-30T07:00:05Z", true},
		{"2026-11-30T07:00:10Z", true},
		{"2026-11-30T07:00:11Z", false},
	} {
		if got := w.Contains(utc(c.at)); got != c.want {
			t.Errorf("Contains(%s) = %v, want %v", c.at, got, c.want)
		}
	}
}

func TestMeanOfNothingIsErrNoSamples(t *testing.T) {
	_, err := meanOf(nil, "x")
	if !errors.Is(err, ErrNoSamples) {
		t.Fatalf("err = %v, want ErrNoSamples", err)
	}
}
