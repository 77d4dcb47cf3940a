package pitfalls

import "strings"

// URL is docs/guides/pitfalls.md as the Terraform Registry shows it.
const URL = "https://registry.terraform.io/providers/gpucluster/gpucluster/latest/docs/guides/pitfalls"

// Ref cites the pitfall with code ("P9") in a message: "pitfall P9, " and the link to its
// entry.
func Ref(code string) string {
	return "pitfall " + code + ", " + URL + "#" + strings.ToLower(code)
}
