//go:build !race

package facade_test

const raceEnabled = false
