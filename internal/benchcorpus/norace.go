//go:build !race

package benchcorpus

// RaceDetector reports whether the race detector is built in: its shadow
// memory grows a process's RSS several times over what the program holds,
// so a bound on peak RSS is asserted only in a build without it (make unit
// runs the memory tests once more without -race).
const RaceDetector = false
