//go:build !race

package agentplugin_test

const raceEnabled = false
