// Command beegfs-standin is the STAND-IN for ThinkParQ's BeeGFS daemons and
// tools, used only by the gpucluster test lab. One binary plays every tool:
// the packages install it under each real tool's name and it acts as the
// name it was called by. Each tool registers itself in tools from its own
// file, so tools stay independent of each other.
//
// It imports only the standard library: the lab builds it on its own, outside
// this module, when it builds the stand-in layer (see ../build-debs.sh).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// tools maps the name a tool is installed as to its entry point, which gets
// the arguments after the name and returns the process's exit status.
var tools = map[string]func(args []string) int{}

func main() {
	name := filepath.Base(os.Args[0])
	tool, ok := tools[name]
	if !ok {
		known := make([]string, 0, len(tools))
		for n := range tools {
			known = append(known, n)
		}
		sort.Strings(known)
		fmt.Fprintf(os.Stderr, "beegfs-standin (gpucluster lab STAND-IN for BeeGFS): unknown tool %q; installed as one of: %s\n", name, strings.Join(known, ", "))
		os.Exit(2)
	}
	os.Exit(tool(os.Args[1:]))
}
