package users

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// IDOwners says which name holds a numeric ID on one host, so a plan can refuse an ID that the
// ledger never saw but a hand-made account already uses.
type IDOwners struct {
	UIDs map[int64]string
	GIDs map[int64]string
}

var ownersPrelude = transport.ScriptEnv + transport.SectionFuncs + ownersFuncs

//go:embed owners.sh
var ownersFuncs string

// ReadIDOwners looks up the owners of the given UIDs and GIDs in one round trip. An ID nobody
// holds is absent from the maps.
func ReadIDOwners(ctx context.Context, ex transport.Executor, uids, gids []int64) (IDOwners, error) {
	script := ownersPrelude
	for _, id := range uids {
		script += "owner passwd " + strconv.FormatInt(id, 10) + "\n"
	}
	for _, id := range gids {
		script += "owner group " + strconv.FormatInt(id, 10) + "\n"
	}
	res, err := ex.Sudo(ctx, script, nil)
	if err != nil {
		return IDOwners{}, fmt.Errorf("look up ID owners: %w", err)
	}
	sections, err := transport.ParseSections(res.Stdout)
	if err != nil {
		return IDOwners{}, &AnswerError{Err: fmt.Errorf("look up ID owners: %w", err)}
	}
	owners := IDOwners{UIDs: map[int64]string{}, GIDs: map[int64]string{}}
	if err := collectOwners(sections, "passwd", uids, owners.UIDs); err != nil {
		return IDOwners{}, &AnswerError{Err: err}
	}
	if err := collectOwners(sections, "group", gids, owners.GIDs); err != nil {
		return IDOwners{}, &AnswerError{Err: err}
	}
	return owners, nil
}

func collectOwners(sections map[string]transport.Section, db string, ids []int64, into map[int64]string) error {
	for _, id := range ids {
		key := db + " " + strconv.FormatInt(id, 10)
		sec, ok := sections[key]
		switch {
		case !ok:
			return fmt.Errorf("look up ID owners: no answer for %s", key)
		case sec.Status == getentNotFound:
		case sec.Status != 0 || len(sec.Lines) == 0:
			return fmt.Errorf("look up ID owners: getent %s exited with status %d", key, sec.Status)
		default:
			into[id], _, _ = strings.Cut(sec.Lines[0], ":")
		}
	}
	return nil
}
