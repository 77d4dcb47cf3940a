// Command terraform-provider-gpucluster is the gpucluster Terraform provider, started by Terraform
// as a plugin. -version prints the version and commit it was built from; -debug serves it for a
// debugger, printing the TF_REATTACH_PROVIDERS value to hand to Terraform. The provider's schemas
// live in internal/provider, the host work in the domain packages beside it.
package main
