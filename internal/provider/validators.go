package provider

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/slurm"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

var (
	userNamePattern      = transport.AccountNamePattern
	absPathOrWordPattern = regexp.MustCompile(`^(/[A-Za-z0-9._/+-]*|[A-Za-z0-9._+-]+)$`)
	// Node references end up in known_hosts lookups, ssh dials and messages; hostnames, IPv4 and
	// IPv6 literals are all that is needed.
	nodeRefPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.:-]{0,252}[A-Za-z0-9])?$`)
)

func portValidators() []validator.Int64 {
	return []validator.Int64{int64validator.Between(1, 65535)}
}

// durationValidator accepts Go durations such as "30s" or "2m".
type durationValidator struct{}

var _ validator.String = durationValidator{}

func (durationValidator) Description(context.Context) string {
	return "must be a duration such as 30s or 2m"
}

func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Duration",
			fmt.Sprintf("%q is not a positive duration. Use a value such as \"30s\" or \"2m\".", req.ConfigValue.ValueString()))
	}
}

// stringCheck validates a string with a domain package's check, so plan refuses exactly
// what the node would.
type stringCheck struct {
	description string
	check       func(string) error
}

var _ validator.String = stringCheck{}

func (v stringCheck) Description(context.Context) string { return v.description }

func (v stringCheck) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v stringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := v.check(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Value", fmt.Sprintf("%s: %v.", v.description, err))
	}
}

// slurmSetting checks a typed attribute's value as Slurm reads key on that kind of line, so a
// value slurmctld would refuse ("forever" for MaxTime) fails at plan, naming the attribute.
func slurmSetting(line slurm.Line, key, description string) stringCheck {
	return stringCheck{description: description, check: func(v string) error { return slurm.CheckSetting(line, key, v) }}
}

// slurmExtraValues checks an extra map's values whose keys Slurm parses (times, memory sizes,
// states) on that kind of line; other keys pass as they are.
type slurmExtraValues struct{ line slurm.Line }

var _ validator.Map = slurmExtraValues{}

func (slurmExtraValues) Description(context.Context) string {
	return "values of settings Slurm parses (times, memory sizes, states) must be ones Slurm reads"
}

func (v slurmExtraValues) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v slurmExtraValues) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for key, e := range req.ConfigValue.Elements() {
		s, ok := e.(types.String)
		if !ok || s.IsNull() || s.IsUnknown() {
			continue
		}
		if err := slurm.CheckSetting(v.line, key, s.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(req.Path.AtMapKey(key), "Invalid Slurm Value",
				fmt.Sprintf("Slurm would refuse this value when it reads slurm.conf, and slurmctld would stop: %v.\n\nNo host was asked or changed.", err))
		}
	}
}

// regexpNoComma is a value inside a comma-separated list.
var regexpNoComma = regexp.MustCompile(`^[^\s#,]+$`)

// slurmValue refuses what would break a slurm.conf line before any host is asked, with the
// pattern the slurm package checks itself.
var slurmValue = stringvalidator.RegexMatches(slurm.ValuePattern, "must not contain whitespace or '#'")

// slurmValueOrEmpty is a controller setting, where "" leaves the line out: what a
// hand-written slurm.conf without the line imports as.
var slurmValueOrEmpty = stringvalidator.Any(stringvalidator.LengthAtMost(0), slurmValue)
