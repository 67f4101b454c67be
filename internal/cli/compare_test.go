package cli

import (
	"bytes"
	"encoding/json"
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

// csb compare -json of the committed Phase 1 reference against itself:
// one document whose environment has no difference; -json with -roots is
// bad usage.
func TestCompareJSONSameEnvironment(t *testing.T) {
	ref := filepath.Join("..", "..", "01-http-baseline", "results", "2026-12-01_040843_http-baseline")
	var stdout, stderr bytes.Buffer
	if got := Main([]string{"compare", "-json", ref, ref}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d (stderr %q)", got, stderr.String())
	}
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Environment   struct {
			Checked     []string          `json:"checked"`
			Differences []json.RawMessage `json:"differences"`
		} `json:"environment"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, stdout.String())
	}
	if doc.SchemaVersion != 1 || len(doc.Environment.Differences) != 0 || len(doc.Environment.Checked) == 0 {
		t.Errorf("document: %s", stdout.String())
	}
	if got := Main([]string{"compare", "-json", "-roots", ref, ref}, &stdout, &stderr); got != 2 {
		t.Errorf("compare -json -roots: status %d, want 2", got)
	}
}
