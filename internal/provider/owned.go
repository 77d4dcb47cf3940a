package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/ownership"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	_ resource.ResourceWithConfigure        = (*ownedGuard)(nil)
	_ resource.ResourceWithConfigValidators = (*ownedGuard)(nil)
	_ resource.ResourceWithImportState      = (*ownedGuard)(nil)
	_ resource.ResourceWithModifyPlan       = (*ownedGuard)(nil)
	_ resource.ResourceWithValidateConfig   = (*ownedGuard)(nil)
)

// ownedGuard gives every object a resource writes exactly one owner. Within one run a second
// resource declaring the same object is refused at plan; across states the record on the host
// (package ownership) decides: a create or import of an object whose record names another
// resource instance is refused, and only the owner's destroy removes the record. The record is
// written before the create's first change, so a create cut short is known as the provider's
// own work afterwards.
type ownedGuard struct {
	wrapper
	spec    ownedSpec
	cluster *cluster
}

// ownedSpec says where a resource's objects are recorded and what they are called.
type ownedSpec struct {
	// kind is the resource type without the provider's prefix.
	kind string
	// locate returns the nodes that keep the records and the names of the objects recorded on
	// each; known is false while the plan leaves one of them unknown.
	locate func(ctx context.Context, c *cluster, data tfsdk.State) (nodes, names []string, known bool, diags diag.Diagnostics)
}

func guardOwned(newResource func() guardedResource, spec ownedSpec) func() guardedResource {
	return func() guardedResource { return &ownedGuard{wrapper: wrapper{newResource()}, spec: spec} }
}

func (g *ownedGuard) Configure(ctx context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	g.cluster = g.configure(ctx, req, resp)
}

// ownerTokenKey holds, in a resource's private state, the token its records carry;
// ownerRecordedKey says that the records are written, phase created; ownerGoneKey that the
// refresh found the object removed outside Terraform (see keepWhileRecorded); ownerUnfinishedKey
// that an import took over the record of an unfinished create (see finishTakeOver).
const (
	ownerTokenKey      = "owner_token"
	ownerRecordedKey   = "owner_recorded"
	ownerGoneKey       = "owner_object_gone"
	ownerUnfinishedKey = "owner_unfinished"
)

func recordedIn(ctx context.Context, private privateReader) bool {
	raw, _ := private.GetKey(ctx, ownerRecordedKey)
	return string(raw) == "true"
}

// typeName is the resource type, which the records and diagnostics name.
func (g *ownedGuard) typeName() string { return "gpucluster_" + g.spec.kind }

// Read notes the token of every resource instance this run refreshes: Terraform plans the
// replacement of a tainted instance as a create that carries neither its prior state nor its
// private state, and the create's check must still know the instance's own record.
func (g *ownedGuard) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	token := ownerToken(ctx, req.Private)
	if token != "" && g.cluster != nil {
		g.cluster.owners.hold(token)
	}
	g.inner.Read(ctx, req, resp)
	switch {
	case token == "" || g.cluster == nil || resp.Diagnostics.HasError():
	case !resp.State.Raw.IsNull():
		if objectGone(ctx, req.Private) {
			resp.Diagnostics.Append(resp.Private.SetKey(ctx, ownerGoneKey, nil)...)
		}
	default:
		g.keepWhileRecorded(ctx, req, resp, token)
	}
}

// keepWhileRecorded keeps in state an instance whose object was removed outside Terraform while
// a record of it still names the instance. Dropped, the instance would take its token with it,
// and the create that follows could not tell its own record from another state's: Terraform
// plans every create again at apply, in a new provider process, without its private state. The
// plan replaces it instead (ModifyPlan): the destroy half releases the records, the create makes
// the object again and records it anew.
func (g *ownedGuard) keepWhileRecorded(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse, token string) {
	loc, ok := g.locate(ctx, req.State, &resp.Diagnostics)
	if !ok || !g.cluster.settingsKnown() {
		return
	}
	places := loc.places()
	records, ok := g.readRecords(ctx, places, &resp.Diagnostics)
	if !ok {
		return
	}
	for _, p := range places {
		if r := records[p]; r.found && r.rec.Token == token {
			resp.State.Raw = req.State.Raw.Copy()
			resp.Diagnostics.Append(resp.Private.SetKey(ctx, ownerGoneKey, []byte("true"))...)
			resp.Diagnostics.AddWarning("Object Removed Outside Terraform",
				fmt.Sprintf("%s is gone, while its ownership record on node %s still names this resource. The plan replaces the resource: the apply creates the object again, recorded as this resource's.",
					describeObject(p.object), p.node))
			return
		}
	}
}

func objectGone(ctx context.Context, private privateReader) bool {
	raw, _ := private.GetKey(ctx, ownerGoneKey)
	return string(raw) == "true"
}

// privateReader is what the requests' and responses' private state offer.
type privateReader interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// ownerToken is the token a resource instance holds; "" for one created before ownership records
// or imported.
func ownerToken(ctx context.Context, private privateReader) string {
	return privateToken(ctx, private, ownerTokenKey)
}

func privateToken(ctx context.Context, private privateReader, key string) string {
	if private == nil {
		return ""
	}
	raw, _ := private.GetKey(ctx, key)
	token := strings.Trim(string(raw), `"`)
	if !ownership.ValidToken(token) {
		return ""
	}
	return token
}

func tokenJSON(token string) []byte { return []byte(`"` + token + `"`) }

// located is where the resource's objects are recorded: each of objects on each of nodes.
type located struct {
	nodes   []string
	objects []ownership.Object
}

// place is one record: an object on the node that keeps it.
type place struct {
	node   string
	object ownership.Object
}

func (l located) places() []place {
	var out []place
	for _, o := range l.objects {
		for _, n := range l.nodes {
			out = append(out, place{node: n, object: o})
		}
	}
	return out
}

// declared are the places under which this run's declarations are compared: an object whose
// record node is not known yet is compared by name alone.
func (l located) declared() []place {
	if len(l.nodes) == 0 {
		return located{nodes: []string{""}, objects: l.objects}.places()
	}
	return l.places()
}

// without are the places of ps that are not in other.
func without(ps, other []place) []place {
	var out []place
	for _, p := range ps {
		if !slices.Contains(other, p) {
			out = append(out, p)
		}
	}
	return out
}

func (g *ownedGuard) locate(ctx context.Context, schemaData tfsdk.State, diags *diag.Diagnostics) (located, bool) {
	if g.cluster == nil || schemaData.Raw.IsNull() {
		return located{}, false
	}
	nodes, names, known, d := g.spec.locate(ctx, g.cluster, schemaData)
	diags.Append(d...)
	if !known || d.HasError() {
		return located{}, false
	}
	canonical := make([]string, 0, len(nodes))
	for _, n := range nodes {
		canonical = append(canonical, g.cluster.canonicalNode(n))
	}
	slices.Sort(canonical)
	objects := make([]ownership.Object, 0, len(names))
	for _, name := range names {
		objects = append(objects, ownership.Object{Kind: g.spec.kind, Name: name})
	}
	return located{nodes: slices.Compact(canonical), objects: objects}, true
}

func planData(p tfsdk.Plan) tfsdk.State { return tfsdk.State(p) }

// ModifyPlan refuses a second declaration of an object within this run, before the resource's
// own checks (which may need a host the second declaration would change), and, for a create, an
// object whose record on its node names another resource instance.
func (g *ownedGuard) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if resp.Plan.Raw.IsNull() {
		g.innerModifyPlan(ctx, req, resp)
		return
	}
	if !req.State.Raw.IsNull() && objectGone(ctx, req.Private) {
		// Terraform plans the create half again, with this private state, through the checks.
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), types.StringUnknown())...)
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("id"))
		return
	}
	loc, ok := g.locate(ctx, planData(resp.Plan), &resp.Diagnostics)
	if ok && !g.declareOnce(ctx, req, resp, loc) {
		return
	}
	g.innerModifyPlan(ctx, req, resp)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	if !g.cluster.settingsKnown() {
		return
	}
	if foreign := privateToken(ctx, req.Private, foreignTokenKey); foreign != "" {
		g.refuseForeign(ctx, loc, foreign, &resp.Diagnostics)
		return
	}
	if req.State.Raw.IsNull() {
		g.checkCreate(ctx, loc.places(), ownerToken(ctx, req.Private), resp)
		return
	}
	g.finishTakeOver(ctx, req, resp)
	prior, ok := g.locate(ctx, req.State, &resp.Diagnostics)
	if ok {
		g.checkAdded(ctx, without(loc.places(), prior.places()), ownerToken(ctx, req.Private), &resp.Diagnostics)
	}
}

// finishTakeOver plans the update that finishes the record an import took over from an
// unfinished create. Until then the record still says "creating", and another state's import
// would take it over too and share the token: two owners of one object. Import only reads, so
// it cannot finish the record itself, and a plan without a difference runs no update: the id is
// planned unknown, and Update sets it back.
func (g *ownedGuard) finishTakeOver(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if raw, _ := req.Private.GetKey(ctx, ownerUnfinishedKey); string(raw) != "true" || recordedIn(ctx, req.Private) {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), types.StringUnknown())...)
	resp.Diagnostics.AddWarning("Unfinished Create Taken Over",
		"This resource was imported from a create that an earlier apply started and did not finish. The apply records it as this resource's own, "+
			"so that no other state can take it over; the plan shows its id as known after apply for that, and the id does not change.")
}

// checkCreate refuses a create of an object whose record names another resource instance.
func (g *ownedGuard) checkCreate(ctx context.Context, places []place, own string, resp *resource.ModifyPlanResponse) {
	records, ok := g.readRecords(ctx, places, &resp.Diagnostics)
	if !ok {
		return
	}
	for _, p := range places {
		r := records[p]
		switch {
		case !r.found || r.rec.Token == own:
		case g.cluster.owners.held(r.rec.Token):
			// The replacement of a tainted instance: its destroy half is handed this plan's
			// private state, and must find the token that lets it remove what the instance made.
			resp.Diagnostics.Append(resp.Private.SetKey(ctx, ownerTokenKey, tokenJSON(r.rec.Token))...)
		default:
			resp.Diagnostics.Append(ownedByAnother(p.node, p.owned(r.rec), "creating it"))
		}
	}
}

// checkAdded refuses an update that adds an object (a server to a rolling reboot, a node to the
// MUNGE key) whose record names an instance of another state. One of this state may be handing
// it over in the same apply; if it has not when this update claims it, the claim refuses.
func (g *ownedGuard) checkAdded(ctx context.Context, added []place, own string, diags *diag.Diagnostics) {
	if len(added) == 0 {
		return
	}
	records, ok := g.readRecords(ctx, added, diags)
	if !ok {
		return
	}
	for _, p := range added {
		if r := records[p]; r.found && r.rec.Token != own && !g.cluster.owners.held(r.rec.Token) {
			diags.Append(ownedByAnother(p.node, p.owned(r.rec), "adding it"))
		}
	}
}

func (g *ownedGuard) innerModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r, ok := g.inner.(resource.ResourceWithModifyPlan); ok {
		r.ModifyPlan(ctx, req, resp)
	}
}

// declareOnce records this instance's declaration of its object for the run, and refuses it
// when another instance declared the same object; ok is false then.
func (g *ownedGuard) declareOnce(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, loc located) (ok bool) {
	token := ownerToken(ctx, req.Private)
	if token == "" {
		// A resource from before ownership records gets its token now, and its Update writes the
		// record; a create's token is made by Create, which sees no private state.
		token = ownership.NewToken()
		if !req.State.Raw.IsNull() {
			resp.Diagnostics.Append(resp.Private.SetKey(ctx, ownerTokenKey, tokenJSON(token))...)
		}
	}
	for _, p := range loc.declared() {
		if !g.cluster.owners.declare(p.node, p.object, token) {
			continue
		}
		where := ""
		if p.node != "" {
			where = " on node " + p.node
		}
		resp.Diagnostics.AddError("Object Declared Twice",
			fmt.Sprintf("Another %s in this configuration also declares %s%s. Two resources would overwrite each other's settings on every apply, and destroying one would remove what the other manages.\n\n"+
				"Keep one declaration of it. To move it from one resource to another, use a moved block (or terraform state mv) rather than a second resource.",
				g.typeName(), describeObject(p.object), where))
		return false
	}
	return true
}

// refuseForeign refuses the plan of an import whose object was owned by another instance, while
// the record still names that instance. Once the owner handed it over (the record is gone), the
// plan goes on and the next apply records this instance.
func (g *ownedGuard) refuseForeign(ctx context.Context, loc located, foreign string, diags *diag.Diagnostics) {
	places := loc.places()
	records, ok := g.readRecords(ctx, places, diags)
	if !ok {
		return
	}
	for _, p := range places {
		if r := records[p]; r.found && r.rec.Token == foreign {
			diags.Append(ownedByAnother(p.node, p.owned(r.rec), "importing it"))
			return
		}
	}
}

// ownedByAnother refuses a change to an object whose record names another resource instance.
func ownedByAnother(node string, owned *ownership.OwnedError, doing string) diag.Diagnostic {
	todo := fmt.Sprintf("Declare it only in the configuration that owns it (an import of it here is undone with terraform state rm, which changes no host). "+
		"To hand it over: remove it from the owner's state (a removed block with destroy = false, or terraform state rm), delete the record on %s (sudo rm %s), then import it here.", node, owned.Path)
	switch {
	case owned.Record.Phase == ownership.Creating:
		todo = fmt.Sprintf("If that apply is still running, wait for it. If it was cut short, what it made is the provider's own but in no state: "+
			"import the object into the configuration that should own it (the import takes over the unfinished record), or remove what it made and the record (sudo rm %s) by hand.", owned.Path)
	case owned.Record.FromHere():
		// A state from before keepWhileRecorded may have dropped the instance, and its token
		// with it: nothing tells the record from another workspace's of this directory.
		todo += fmt.Sprintf(" The record names this working directory: if it is this resource's own (its object was removed by hand and an earlier run dropped it from state) "+
			"and no other workspace here declares it, delete the record (sudo rm %s on %s) and apply again.", owned.Path, node)
	}
	return nodeError("Object Owned By Another Resource", node,
		fmt.Sprintf("Nothing was changed: %s is recorded as owned by %s, and %s here would fight over it", describeObject(owned.Object), owned.Record.Owner(), doing),
		todo, nil)
}

func describeObject(o ownership.Object) string {
	return strings.ReplaceAll(o.Kind, "_", " ") + " " + o.Name
}

func describeObjects(places []place) string {
	var names []string
	for _, p := range places {
		if d := describeObject(p.object); !slices.Contains(names, d) {
			names = append(names, d)
		}
	}
	return strings.Join(names, ", ")
}

// Create claims the object's record before the inner create changes anything. A create that
// fails and keeps partial state (Terraform keeps it as tainted, so the next apply destroys what it
// made and creates it again) finishes the record; one cut short by a lost connection or a
// cancelled apply after it sent a change leaves the record unfinished, for the next plan to
// name; any other failure releases it, as a retry converges on what is there.
func (g *ownedGuard) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	loc, ok := g.locate(ctx, planData(req.Plan), &resp.Diagnostics)
	if !ok {
		if !resp.Diagnostics.HasError() {
			g.inner.Create(ctx, req, resp)
		}
		return
	}
	token := ownership.NewToken()
	places := loc.places()
	record := ownership.Here(g.typeName(), token, ownership.Creating, time.Now())
	claimed, ok := g.claim(ctx, places, record, &resp.Diagnostics, "creating it")
	if !ok {
		g.release(ctx, claimed, token, &resp.Diagnostics)
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, ownerTokenKey, tokenJSON(token))...)
	innerCtx, writes := transport.TrackWrites(ctx)
	g.inner.Create(innerCtx, req, resp)
	switch {
	case !resp.Diagnostics.HasError():
		record.Phase = ownership.Created
		if _, ok := g.claim(ctx, places, record, &resp.Diagnostics, "finishing its create"); ok {
			resp.Diagnostics.Append(resp.Private.SetKey(ctx, ownerRecordedKey, []byte("true"))...)
		}
	case !resp.State.Raw.IsNull():
		resp.State.Raw = nullUnknowns(resp.State.Raw)
		record.Phase = ownership.Created
		var ignored diag.Diagnostics
		if _, ok := g.claim(ctx, places, record, &ignored, "keeping its partial create"); ok {
			resp.Diagnostics.Append(resp.Private.SetKey(ctx, ownerRecordedKey, []byte("true"))...)
		}
	case !writes.Sent() || !writes.CutShort():
		g.release(ctx, claimed, token, &resp.Diagnostics)
	}
}

// byNode groups places by the node that keeps their records.
func byNode(places []place) (nodes []string, objects map[string][]ownership.Object) {
	objects = map[string][]ownership.Object{}
	for _, p := range places {
		if objects[p.node] == nil {
			nodes = append(nodes, p.node)
		}
		objects[p.node] = append(objects[p.node], p.object)
	}
	return nodes, objects
}

// claim writes record at every place, the nodes at once, and returns the places it was written
// at; ok is false when a node refused or failed. A node's objects are claimed in order, and the
// first refusal stops that node.
func (g *ownedGuard) claim(ctx context.Context, places []place, record ownership.Record, diags *diag.Diagnostics, doing string) (claimed []place, ok bool) {
	nodes, objects := byNode(places)
	var mu sync.Mutex
	failures := g.cluster.onEachNode(ctx, nodes, func(node string, h *transport.Host) error {
		for _, o := range objects[node] {
			if err := ownership.Claim(ctx, h, o, record); err != nil {
				return err
			}
			mu.Lock()
			claimed = append(claimed, place{node: node, object: o})
			mu.Unlock()
		}
		return nil
	})
	for _, f := range failures {
		var owned *ownership.OwnedError
		if errors.As(f.err, &owned) {
			diags.Append(ownedByAnother(f.node, owned, doing))
			continue
		}
		diags.Append(failureDiags([]nodeFailure{f}, "Cannot Write Ownership Record", "Recording the owner of "+describeObjects(places)+" failed", "")...)
	}
	return claimed, len(failures) == 0
}

func (g *ownedGuard) release(ctx context.Context, places []place, token string, diags *diag.Diagnostics) {
	nodes, objects := byNode(places)
	failures := g.cluster.onEachNode(ctx, nodes, func(node string, h *transport.Host) error {
		var errs []error
		for _, o := range objects[node] {
			errs = append(errs, ownership.Release(ctx, h, o, token))
		}
		return errors.Join(errs...)
	})
	diags.Append(failureDiags(failures, "Cannot Remove Ownership Record", "Removing the owner record of "+describeObjects(places)+" failed",
		"Check the file named below on that node.")...)
}

// nullUnknowns makes partial state storable: Terraform keeps no unknown values in state.
func nullUnknowns(v tftypes.Value) tftypes.Value {
	out, err := tftypes.Transform(v, func(_ *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if !v.IsKnown() {
			return tftypes.NewValue(v.Type(), nil), nil
		}
		return v, nil
	})
	if err != nil {
		return v
	}
	return out
}

// Update writes the records of a resource that has none yet (one from before ownership records,
// an import, an unfinished create taken over), and those of the objects it adds, then updates;
// the records of the objects it drops go once the update is done. A recorded resource whose
// objects stay costs no round trip.
func (g *ownedGuard) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	token := ownerToken(ctx, req.Private)
	loc, ok := g.locate(ctx, planData(req.Plan), &resp.Diagnostics)
	prior, priorOK := g.locate(ctx, req.State, &resp.Diagnostics)
	if !ok || !priorOK || token == "" {
		if !resp.Diagnostics.HasError() {
			g.inner.Update(ctx, req, resp)
		}
		return
	}
	claim := loc.places()
	recorded := recordedIn(ctx, req.Private)
	if recorded {
		claim = without(claim, prior.places())
	}
	if len(claim) > 0 {
		claimed, ok := g.claim(ctx, claim, ownership.Here(g.typeName(), token, ownership.Created, time.Now()), &resp.Diagnostics, "changing it")
		if !ok {
			if recorded {
				g.release(ctx, claimed, token, &resp.Diagnostics)
			}
			return
		}
	}
	if !recorded {
		// An import whose owner handed the object over is this instance's now.
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, foreignTokenKey, nil)...)
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, ownerUnfinishedKey, nil)...)
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, ownerRecordedKey, []byte("true"))...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	g.inner.Update(ctx, req, resp)
	keepID(ctx, req.State, &resp.State, &resp.Diagnostics)
	if dropped := without(prior.places(), loc.places()); len(dropped) > 0 && !resp.Diagnostics.HasError() {
		g.release(ctx, dropped, token, &resp.Diagnostics)
	}
}

// keepID sets an id that the plan left unknown (finishTakeOver) back to the id in prior.
func keepID(ctx context.Context, prior tfsdk.State, state *tfsdk.State, diags *diag.Diagnostics) {
	var id, before types.String
	if state.Raw.IsNull() || state.GetAttribute(ctx, path.Root("id"), &id).HasError() || !id.IsUnknown() {
		return
	}
	diags.Append(prior.GetAttribute(ctx, path.Root("id"), &before)...)
	diags.Append(state.SetAttribute(ctx, path.Root("id"), before)...)
}

// Delete leaves an object whose record names another resource instance alone: only its owner
// may remove it. The record goes once the object is gone.
func (g *ownedGuard) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	loc, ok := g.locate(ctx, req.State, &resp.Diagnostics)
	if !ok {
		if !resp.Diagnostics.HasError() {
			g.inner.Delete(ctx, req, resp)
		}
		return
	}
	token := ownerToken(ctx, req.Private)
	places := loc.places()
	if objectGone(ctx, req.Private) {
		// The destroy half of the replacement that makes it again: only the records are left.
		g.release(ctx, places, token, &resp.Diagnostics)
		return
	}
	records, ok := g.readRecords(ctx, places, &resp.Diagnostics)
	if !ok {
		return
	}
	for _, p := range places {
		if r := records[p]; r.found && r.rec.Token != token {
			resp.Diagnostics.AddWarning("Object Left To Its Owner",
				fmt.Sprintf("%s was removed from this state only: on node %s it is recorded as owned by %s (%s), so nothing on the node was changed.",
					describeObject(p.object), p.node, r.rec.Owner(), recordPath(p.object)))
			return
		}
	}
	g.inner.Delete(ctx, req, resp)
	if !resp.Diagnostics.HasError() && token != "" {
		g.release(ctx, places, token, &resp.Diagnostics)
	}
}

// ImportState only reads, like every import: an unfinished create's record is taken over (what
// that create made is the provider's own); an object another resource instance owns is imported
// with a warning and noted in private state, and every plan of it is refused until the owner
// hands it over (ModifyPlan). Terraform's own re-import of a resource to verify it, and import
// blocks, which import during the plan, both go through here.
func (g *ownedGuard) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	g.inner.ImportState(ctx, req, resp)
	if resp.Diagnostics.HasError() {
		return
	}
	loc, ok := g.locate(ctx, resp.State, &resp.Diagnostics)
	if !ok {
		return
	}
	places := loc.places()
	records, ok := g.readRecords(ctx, places, &resp.Diagnostics)
	if !ok {
		return
	}
	for _, p := range places {
		r := records[p]
		switch {
		case !r.found:
		case r.rec.Phase == ownership.Creating:
			resp.Diagnostics.Append(resp.Private.SetKey(ctx, ownerTokenKey, tokenJSON(r.rec.Token))...)
			resp.Diagnostics.Append(resp.Private.SetKey(ctx, ownerUnfinishedKey, []byte("true"))...)
		default:
			resp.Diagnostics.Append(resp.Private.SetKey(ctx, foreignTokenKey, tokenJSON(r.rec.Token))...)
			resp.Diagnostics.AddWarning("Imported Object Has Another Owner",
				fmt.Sprintf("%s is recorded on node %s as owned by %s. Every plan of this resource is refused until the owner hands it over: "+
					"remove it from the owner's state (a removed block with destroy = false, or terraform state rm) and delete the record (sudo rm %s).",
					describeObject(p.object), p.node, r.rec.Owner(), recordPath(p.object)))
			return
		}
	}
}

// foreignTokenKey holds, in the private state of an import, the token of the instance that the
// record named at import.
const foreignTokenKey = "foreign_owner_token"

func recordPath(o ownership.Object) string {
	p, _ := o.Path()
	return p
}

// recordOn is what one node holds of an object's record.
type recordOn struct {
	rec   ownership.Record
	found bool
}

// readRecords reads the records of places, the nodes at once; ok is false once diags holds an
// error.
func (g *ownedGuard) readRecords(ctx context.Context, places []place, diags *diag.Diagnostics) (map[place]recordOn, bool) {
	nodes, objects := byNode(places)
	var mu sync.Mutex
	records := map[place]recordOn{}
	failures := g.cluster.onEachNode(ctx, nodes, func(node string, h *transport.Host) error {
		for _, o := range objects[node] {
			rec, found, err := ownership.Read(ctx, h, o)
			if err != nil {
				return err
			}
			mu.Lock()
			records[place{node: node, object: o}] = recordOn{rec: rec, found: found}
			mu.Unlock()
		}
		return nil
	})
	diags.Append(failureDiags(failures, "Cannot Read Ownership Record", "Reading the ownership record of "+describeObjects(places)+" failed",
		"Check the file named below on that node: only the provider writes it.")...)
	return records, len(failures) == 0
}

// owned is the refusal of p's object, which rec names another instance as owner of.
func (p place) owned(rec ownership.Record) *ownership.OwnedError {
	return &ownership.OwnedError{Object: p.object, Path: recordPath(p.object), Record: rec}
}
