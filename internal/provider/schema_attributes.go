package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// nodeAttribute is the required "node" of a resource that lives on one node, named by name or
// address; doc ends with "Changing it replaces the resource." because it does.
func nodeAttribute(doc string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: doc,
		Required:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		Validators:          []validator.String{stringvalidator.RegexMatches(nodeRefPattern, "must be a node name or address")},
	}
}
