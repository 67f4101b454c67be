package usage

import (
	"errors"
	"fmt"
	"testing"
)

func TestIs(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", Errorf("-port %d is out of range", 70000))
	if !Is(err) || err.Error() != "wrapped: -port 70000 is out of range" {
		t.Fatalf("%v", err)
	}
	if Is(errors.New("other")) || Is(nil) {
		t.Fatal("not a usage error")
	}
}
