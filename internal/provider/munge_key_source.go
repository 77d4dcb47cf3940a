package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/munge"
)

// keyInputs are what chooseKey weighs besides the controller's key: whether rotation changed,
// the fingerprint in state before this apply, and the one the plan shows ("" when unknown).
type keyInputs struct {
	rotationChanged  bool
	inState, planned string
}

// keySource is where converge takes the cluster's key from.
type keySource int

const (
	useControllerKey keySource = iota
	generateNewKey
)

// chooseKey decides from the fingerprint of the controller's key now (current, "" when it has
// none). A changed rotation asks for a new key only while the controller still holds the key
// the state knows: another key there means the rotation already happened, in an apply that then
// failed on some node, and a retry spreads that key instead of generating yet another and
// restarting munged everywhere again. Without a rotation, a key other than the one the plan
// shows was put there after the refresh the plan came from; spreading it would install a key
// no plan showed (and break Terraform's promise that the applied value matches the plan), so
// converge stops before changing anything and asks for a refresh.
func chooseKey(current string, in keyInputs) (keySource, error) {
	switch {
	case !in.rotationChanged && in.planned != "" && current != in.planned:
		holds := "no key"
		if current != "" {
			holds = "the key with sha256 " + current
		}
		return useControllerKey, fmt.Errorf("the controller holds %s; the plan was made for the key with sha256 %s", holds, in.planned)
	case current == "", in.rotationChanged && current == in.inState:
		return generateNewKey, nil
	}
	return useControllerKey, nil
}

// controllerKey takes the controller's key or generates a new one there, as chooseKey decides;
// generated says which. The key stays in memory and is never written to local disk.
func (r *mungeKeyResource) controllerKey(ctx context.Context, controller string, in keyInputs) (key []byte, generated bool, diags diag.Diagnostics) {
	h, ok := r.cluster.connect(ctx, controller, &diags)
	if !ok {
		return nil, false, diags
	}
	// The fingerprint alone decides, so a key munged would refuse can still be rotated away.
	st, err := munge.ReadState(ctx, h)
	if err != nil {
		diags.Append(nodeError("Cannot Read MUNGE State", controller, "Reading the MUNGE key's fingerprint failed", "", err))
		return nil, false, diags
	}
	source, err := chooseKey(st.Fingerprint, in)
	if err != nil {
		diags.Append(nodeError("MUNGE Key Changed Since Plan", controller,
			"The key on the controller was replaced after the refresh this plan was made from, so nothing was changed",
			"Apply again with a refresh (without -refresh=false): the refresh reports the new key and the plan shows which nodes get it.", err))
		return nil, false, diags
	}
	if source == generateNewKey {
		key, err := munge.GenerateKey(ctx, h)
		if err != nil {
			diags.Append(nodeError("Cannot Generate MUNGE Key", controller, "Generating a key with mungekey failed", "", err))
		}
		return key, err == nil, diags
	}
	key, exists, err := munge.ReadKey(ctx, h)
	if err == nil && !exists {
		err = fmt.Errorf("%s disappeared while the apply read it", munge.KeyPath)
	}
	if err != nil {
		diags.Append(nodeError("Cannot Read MUNGE Key", controller, "Reading "+munge.KeyPath+" failed",
			"Replace the key with a valid one (mungekey --create --force), or change rotation to generate a new one.", err))
		return nil, false, diags
	}
	return key, false, diags
}
