//go:build generate

// Package tools pins the documentation generator in its own module, so that
// tfplugindocs and its dependencies never enter the provider's go.mod.
package tools

import (
	_ "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs"
)

// The generated docs embed the examples, so format those first.
//go:generate terraform fmt -recursive ../examples/

// Uses the terraform on PATH (the GNUmakefile checks it is there): without
// --tf-version tfplugindocs looks on PATH first, and --tf-version would download.
//go:generate go run github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs generate --provider-dir .. --provider-name gpucluster --rendered-provider-name gpucluster
