// Package unitstest answers the host's shared read of unit states, for the tests of the packages
// that read a unit through units.Read.
package unitstest
