// Package pitfalls cites the guide's pitfalls in messages. docs/guides/pitfalls.md lists every
// pitfall the provider refuses or warns about, with the guide's reason and the resource that
// checks it; a message names a pitfall by code and links to its entry there, so an admin who
// meets "P9" in an error can read what it is about.
package pitfalls
