package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"csbench/internal/httpphase"
	"csbench/internal/parse"
	"csbench/internal/phase0"
	"csbench/internal/phase1"
	"csbench/internal/phase2"
	"csbench/internal/phase3"
	"csbench/internal/phase4"
	"csbench/internal/phase5"
)

func init() {
	Checks["iperf3"] = func(r io.Reader) error { _, err := parse.ParseIperf3(r); return err }
	Checks["json"] = checkJSON
	Checks["connclient"] = phase3.CheckResult
	LoadReaders["wrk"] = httpphase.ReadWrk
	LoadReaders["oha"] = func(path string) (*httpphase.Load, error) { return httpphase.ReadOha(path, nil) }
	LoadReaders["h2load"] = httpphase.ReadH2load
	Phases["00-iperf3"] = phase0.Phase{}
	Phases["01-http-baseline"] = phase1.Phase{}
	Phases["02-http-matrix"] = phase2.Phase{}
	Phases["03-c10k"] = phase3.Phase{}
	Phases["04-connections"] = phase4.Phase{}
	Phases["05-capacity"] = phase5.Phase{}
}

// checkJSON fails unless r holds exactly one well-formed JSON document (a
// monitor file cut short, or two writers' output interleaved, fails).
func checkJSON(r io.Reader) error {
	dec := json.NewDecoder(r)
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not a JSON document: %w", err)
	}
	if err := dec.Decode(&v); !errors.Is(err, io.EOF) {
		return errors.New("not a single JSON document: more follows the first")
	}
	return nil
}
