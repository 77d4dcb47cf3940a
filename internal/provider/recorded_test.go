package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Only a resource whose state says false is unrecorded: state from before `recorded` existed
// (null) was recorded by the import or create that wrote it.
func TestUnrecorded(t *testing.T) {
	for _, tc := range []struct {
		recorded types.Bool
		want     bool
	}{
		{types.BoolValue(false), true},
		{types.BoolValue(true), false},
		{types.BoolNull(), false},
		{types.BoolUnknown(), false},
	} {
		if got := unrecorded(tc.recorded); got != tc.want {
			t.Errorf("unrecorded(%s) = %v, want %v", tc.recorded, got, tc.want)
		}
	}
}

// An update records the ledger line alone only when recorded is the one attribute that differs.
func TestOnlyRecordedDiffers(t *testing.T) {
	object := func(shell string, recorded any) tftypes.Value {
		typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"shell": tftypes.String, "recorded": tftypes.Bool}}
		return tftypes.NewValue(typ, map[string]tftypes.Value{
			"shell": tftypes.NewValue(tftypes.String, shell), "recorded": tftypes.NewValue(tftypes.Bool, recorded),
		})
	}
	for _, tc := range []struct {
		name        string
		plan, state tftypes.Value
		want        bool
	}{
		{"recorded false -> true", object("/bin/sh", true), object("/bin/sh", false), true},
		{"recorded null -> true", object("/bin/sh", true), object("/bin/sh", nil), true},
		{"the shell changes too", object("/bin/bash", true), object("/bin/sh", false), false},
		{"only the shell changes", object("/bin/bash", true), object("/bin/sh", true), false},
	} {
		if got := onlyRecordedDiffers(tc.plan, tc.state); got != tc.want {
			t.Errorf("%s: onlyRecordedDiffers = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// upgradedState hands state JSON as an older provider version wrote it to the provider's
// UpgradeResourceState and returns the attributes of the state it gives back.
func upgradedState(t *testing.T, typeName, raw string) map[string]tftypes.Value {
	t.Helper()
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{TypeName: typeName, RawState: &tfprotov6.RawState{JSON: []byte(raw)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("%s: %s", d.Summary, d.Detail)
	}
	upgraded, err := resp.UpgradedState.Unmarshal(schemas.ResourceSchemas[typeName].ValueType())
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]tftypes.Value
	if err := upgraded.As(&values); err != nil {
		t.Fatal(err)
	}
	return values
}

// State of users and groups written before `recorded` existed needs no state upgrade of its
// own: the framework reads the attribute as null (which unrecorded counts as recorded), and
// Read then fills it from the ledger.
func TestAccountStateWithoutRecorded(t *testing.T) {
	for typeName, raw := range map[string]string{
		"gpucluster_user": `{"id":"alice","name":"alice","uid":1001,"group":"users","groups":null,"shell":"/bin/sh","home":"/home/alice",` +
			`"nodes":["login01","gpu01"],"home_on":null,"allow_system_uid":false,"allow_admin_groups":false,` +
			`"node_status":{"login01":"in sync","gpu01":"in sync"},"adopted_on":[]}`,
		"gpucluster_group": `{"id":"users","name":"users","gid":100,"nodes":["login01","gpu01"],"allow_system_gid":true,` +
			`"allow_admin_group":false,"node_status":{"login01":"in sync","gpu01":"in sync"},"adopted_on":["login01"]}`,
	} {
		values := upgradedState(t, typeName, raw)
		if !values["recorded"].IsNull() {
			t.Errorf("%s: recorded = %v in state from before it existed, want null", typeName, values["recorded"])
		}
		if name := values["id"]; !values["name"].Equal(name) || name.IsNull() || values["node_status"].IsNull() {
			t.Errorf("%s: the state's other attributes were not kept: %v", typeName, values)
		}
	}
}
