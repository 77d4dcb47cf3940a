// Package transporttest holds stand-ins for a connected host, for the tests
// of the packages that run their scripts through one.
package transporttest
