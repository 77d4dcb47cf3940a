// Package provider maps Terraform configuration onto the domain packages. It holds only
// framework glue: schemas, models and CRUD mapping. It reaches hosts through the domain
// packages alone; the linter refuses a host command, a host file or local file I/O here.
package provider
