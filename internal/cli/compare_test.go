package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// csb compare refuses a summary.json of an unknown schema_version, naming
// the file and both versions.
func TestCompareRefusesUnknownSchemaVersion(t *testing.T) {
	dir := t.TempDir()
	var runs []string
	for i, v := range []string{"2", "1"} {
		run := filepath.Join(dir, []string{"a", "b"}[i])
		if err := os.Mkdir(run, 0o755); err != nil {
			t.Fatal(err)
		}
		doc := `{"schema_version": ` + v + `, "phase": "00-iperf3", "cells": []}`
		if err := os.WriteFile(filepath.Join(run, "summary.json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	var stdout, stderr bytes.Buffer
	if got := Main(append([]string{"compare"}, runs...), &stdout, &stderr); got != 1 {
		t.Fatalf("status %d, want 1 (stderr %q)", got, stderr.String())
	}
	want := filepath.Join(runs[0], "summary.json") + " has schema_version 2; this csb reads schema_version 1"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not contain %q", stderr.String(), want)
	}
}
