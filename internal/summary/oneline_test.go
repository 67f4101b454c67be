package summary

import (
	"errors"
	"strings"
	"testing"
)

func TestOneLine(t *testing.T) {
	got := OneLine("a\n\tb  c\x00\x1b[1m é", 200)
	if got != "a b c??[1m ?" {
		t.Errorf("got %q", got)
	}
	long := OneLine(strings.Repeat("x", 500), 50)
	if len(long) != 50 || !strings.HasSuffix(long, "...") {
		t.Errorf("got %q (%d bytes)", long, len(long))
	}
}

func TestSetUnparsed(t *testing.T) {
	c := Cell{Status: "ok"}
	c.SetUnparsed("/r/run", "/r/run/raw/x.json", errors.New("not json: open /r/run/raw/x.json: no such file"))
	if c.Status != "failed" || c.Unparsed != "raw/x.json" || *c.Error != "raw/x.json: not json: open raw/x.json: no such file" {
		t.Errorf("got %+v %q", c, *c.Error)
	}
}
