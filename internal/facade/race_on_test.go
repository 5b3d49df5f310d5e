//go:build race

package facade_test

// raceEnabled: the race detector slows the CPU-bound load tests several
// times over; they then run a smaller count (.ci/run also runs them whole
// without it).
const raceEnabled = true
