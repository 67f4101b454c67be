//go:build race

package server

// raceEnabled: the race detector makes allocation counts meaningless.
const raceEnabled = true
