package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// nodeRefValidator accepts a node named by name or address, as the nodes map and SSH know it.
var nodeRefValidator = stringvalidator.RegexMatches(nodeRefPattern, "must be a node name or address")

// nodeAttribute is the required "node" of a resource that lives on one node, named by name or
// address; doc ends with "Changing it replaces the resource." because it does.
func nodeAttribute(doc string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: doc,
		Required:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		Validators:          []validator.String{nodeRefValidator},
	}
}

// computedKeptAttribute is a string the provider sets, which a plan shows as it is in the state
// rather than as known after apply: the ID, or a fact of the node that an update leaves as it was.
func computedKeptAttribute(doc string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: doc,
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}
