package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = (*nodeFactsDataSource)(nil)

// NewNodeFactsDataSource returns the gpucluster_node_facts data source.
func NewNodeFactsDataSource() datasource.DataSource { return &nodeFactsDataSource{} }

type nodeFactsDataSource struct{ cluster *cluster }

type nodeFactsModel struct {
	ID   types.String `tfsdk:"id"`
	Node types.String `tfsdk:"node"`
	factsModel
}

func (d *nodeFactsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_facts"
}

func (d *nodeFactsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		"id": schema.StringAttribute{
			MarkdownDescription: "The node as given.",
			Computed:            true,
		},
		"node": schema.StringAttribute{
			MarkdownDescription: "Node to inspect, by name or address.",
			Required:            true,
			Validators:          []validator.String{nodeRefValidator},
		},
	}
	for name, desc := range factDescriptions {
		switch factKind(name) {
		case "bool":
			attrs[name] = schema.BoolAttribute{MarkdownDescription: desc, Computed: true}
		case "int":
			attrs[name] = schema.Int64Attribute{MarkdownDescription: desc, Computed: true}
		default:
			attrs[name] = schema.StringAttribute{MarkdownDescription: desc, Computed: true}
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a node's facts (OS, kernel, hardware as `slurmd -C` sees it, GPUs, time synchronisation) without managing anything. Use it to fill Slurm node definitions or to check a new GPU server before adding it.",
		Attributes:          attrs,
	}
}

func (d *nodeFactsDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.cluster = clusterFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *nodeFactsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx = readingDataSource(ctx, "node facts")
	m, ok := modelFrom[nodeFactsModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	node := m.Node.ValueString()
	_, facts, diags := d.cluster.gatherFacts(ctx, node, node)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.ID = m.Node
	m.factsModel = factsFrom(facts)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
