// A stand-in for the hashicorp/null provider, for the remote-run tests that have no provider registry to install
// the real one from. It implements what those configurations use: the resource null_resource with its `triggers`
// map (a change replaces the resource) and its computed `id` (a random decimal number, as the real provider's).
// One addition for the tests: NULL_STANDIN_PLAN_SECONDS in the provider's environment (a workspace's env variable
// reaches it through the agent) makes planning a null_resource take that long, so a test can interrupt a run while
// it is planning; Terraform stopping the provider (its Ctrl-C handling) ends the wait at once.
// Built by scripts/lib/binaries.mjs (ensureNullProvider) and placed into a filesystem mirror as
// registry.terraform.io/hashicorp/null.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"log"
	"math"
	"math/big"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// version is set at build time (-ldflags "-X main.version=…") to the version the mirror publishes it as.
var version = "dev"

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers")
	flag.Parse()
	err := providerserver.Serve(context.Background(), func() provider.Provider { return &nullProvider{} }, providerserver.ServeOpts{
		Address: "registry.terraform.io/hashicorp/null",
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}

type nullProvider struct{}

func (p *nullProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "null"
	resp.Version = version
}

func (p *nullProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema.Description = "A stand-in for hashicorp/null: null_resource only."
}

func (p *nullProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *nullProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return &nullResource{} }}
}

func (p *nullProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type nullResource struct{}

var _ resource.ResourceWithModifyPlan = &nullResource{}

type nullResourceModel struct {
	ID       types.String `tfsdk:"id"`
	Triggers types.Map    `tfsdk:"triggers"`
}

func (r *nullResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_resource"
}

func (r *nullResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Does nothing; replaced whenever a value in triggers changes.",
		Attributes: map[string]schema.Attribute{
			"triggers": schema.MapAttribute{
				Description:   "Values whose change replaces the resource.",
				ElementType:   types.StringType,
				Optional:      true,
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
			},
			"id": schema.StringAttribute{
				Description:   "A random number set when the resource is created.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
		},
	}
}

// ModifyPlan only waits (see NULL_STANDIN_PLAN_SECONDS above); the plan itself is the framework's.
func (r *nullResource) ModifyPlan(ctx context.Context, _ resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	seconds, err := strconv.Atoi(os.Getenv("NULL_STANDIN_PLAN_SECONDS"))
	if err != nil || seconds <= 0 {
		return
	}
	select {
	case <-ctx.Done(): // the server cancels every request's context when Terraform stops the provider
		resp.Diagnostics.AddError("Interrupted", "planning was stopped")
	case <-time.After(time.Duration(seconds) * time.Second):
	}
}

func (r *nullResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m nullResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	n, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		resp.Diagnostics.AddError("Random number", err.Error())
		return
	}
	m.ID = types.StringValue(strconv.FormatInt(n.Int64(), 10))
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// Read keeps the state as it is: nothing exists outside Terraform to refresh from.
func (r *nullResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

// Update is never called with a change (every attribute forces replacement or is computed), but the framework
// requires it; it keeps the planned values.
func (r *nullResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m nullResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (r *nullResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
