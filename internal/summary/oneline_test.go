package summary

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
	_, open := os.Open("/r/run/raw/x.json")
	c.SetRawError("/r/run", "/r/run/raw/x.json", fmt.Errorf("no output: %w", open))
	if c.Status != "failed" || c.Unparsed != "raw/x.json" || *c.Error != "raw/x.json: no output: open raw/x.json: no such file or directory" {
		t.Errorf("got %+v %q", c, *c.Error)
	}
	var v struct{}
	cut := json.Unmarshal([]byte(`{"a": `), &v)
	c = Cell{Status: "ok"}
	c.SetRawError("/r/run", "/r/run/raw/x.json", fmt.Errorf("iperf3: %w", cut))
	if c.Unparsed != "raw/x.json" {
		t.Errorf("a cut-short file must count as unparsed: %+v", c)
	}
	c = Cell{Status: "ok"}
	c.SetRawError("/r/run", "/r/run/raw/x.json", errors.New("iperf3 reported: unable to connect"))
	if c.Status != "failed" || c.Unparsed != "" {
		t.Errorf("a tool's own reported failure is a failed cell, not an unparsed file: %+v", c)
	}
}
