// Package provider maps Terraform configuration onto the domain packages. It holds only
// framework glue: schemas, models and CRUD mapping.
package provider
