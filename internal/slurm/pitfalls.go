package slurm

import "strings"

// PitfallsURL is docs/guides/pitfalls.md as the Terraform Registry shows it. The page lists
// every pitfall of the guide the provider refuses or warns about, with the guide's reason and
// the resource that checks it.
const PitfallsURL = "https://registry.terraform.io/providers/gpucluster/gpucluster/latest/docs/guides/pitfalls"

// PitfallRef cites the pitfall with code ("P9") in a message: "pitfall P9, " and the link to
// its entry, so an admin who meets the code in an error can read what it is about.
func PitfallRef(code string) string {
	return "pitfall " + code + ", " + PitfallsURL + "#" + strings.ToLower(code)
}
