//go:build !race

package skill

const raceEnabled = false
